package htmlobject

import (
	"encoding/json"
	"testing"
)

func TestConvert(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, html string
		check      func(t *testing.T, o map[string]any)
	}{
		{"text element", `<p style="color: red; margin:0">Hello <b>you</b></p>`, func(t *testing.T, o map[string]any) {
			want(t, o, "type", "text")
			want(t, o, "tag", "p")
			want(t, o, "name", "P")
			want(t, o, "css", []any{map[string]any{"selector": "&", "rules": []any{[]any{"color", "red"}, []any{"margin", "0"}}}})
			want(t, o, "content", map[string]any{"en": "Hello <b>you</b>"})
		}},
		{"list with class styles, events and attributes", `<style>.card { padding: 4px }</style><div id="main" class="card" onclick="go()" data-event-input="x()" title="t"><h1>Hi</h1><img src="a.png" alt="A"></div>`, func(t *testing.T, o map[string]any) {
			want(t, o, "type", "list")
			want(t, o, "name", "main")
			want(t, o, "id", "main")
			want(t, o, "attribute", map[string]any{"title": "t"})
			want(t, o, "css", []any{map[string]any{"selector": "&", "rules": []any{[]any{"padding", "4px"}}}})
			want(t, o, "domEvents", []any{map[string]any{"name": "click", "call": "go()"}, map[string]any{"name": "input", "call": "x()"}})
			kids := o["content"].([]any)
			if len(kids) != 2 {
				t.Fatalf("children = %v", kids)
			}
			want(t, kids[1].(map[string]any), "type", "image")
			want(t, kids[1].(map[string]any), "content", []any{"A", "a.png"})
		}},
		{"block with one child, link and icon", `<section><a href="/x">go</a></section><i class="lucide zap"></i>`, func(t *testing.T, o map[string]any) {
			want(t, o, "name", "RootContainer")
			kids := o["content"].([]any)
			sec := kids[0].(map[string]any)
			want(t, sec, "type", "block")
			want(t, sec["content"].(map[string]any), "content", map[string]any{"url": "/x", "text": map[string]any{"en": "go"}})
			want(t, kids[1].(map[string]any), "type", "icon")
			want(t, kids[1].(map[string]any), "content", "zap")
		}},
		{"a class rule with no declarations gives empty rules, not null", `<style>.a { ; }</style><div class="a">x</div>`, func(t *testing.T, o map[string]any) {
			want(t, o, "css", []any{map[string]any{"selector": "&", "rules": []any{}}})
		}},
		{"empty element is a block without content", `<div></div>`, func(t *testing.T, o map[string]any) {
			want(t, o, "type", "block")
			if _, ok := o["content"]; ok {
				t.Errorf("content = %v, want none", o["content"])
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := Convert(tc.html)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, o)
			again, _ := Convert(tc.html)
			a, _ := json.Marshal(o)
			b, _ := json.Marshal(again)
			if string(a) != string(b) {
				t.Errorf("two conversions differ:\n%s\n%s", a, b)
			}
			ids := map[string]bool{}
			var walk func(v any)
			walk = func(v any) {
				switch x := v.(type) {
				case map[string]any:
					if id, ok := x["identifier"].(string); ok {
						if ids[id] {
							t.Errorf("identifier %q twice", id)
						}
						ids[id] = true
					}
					walk(x["content"])
				case []any:
					for _, e := range x {
						walk(e)
					}
				}
			}
			walk(o)
		})
	}
}

func want(t *testing.T, o map[string]any, k string, v any) {
	t.Helper()
	a, _ := json.Marshal(o[k])
	b, _ := json.Marshal(v)
	if string(a) != string(b) {
		t.Errorf("%s = %s, want %s", k, a, b)
	}
}
