package toon_test

import (
	"fmt"

	"github.com/nodius/nodius-ai/rag/toon"
)

func ExampleEncode() {
	ctx := toon.Object{
		{Key: "query", Value: "what does fetch-api do?"},
		{Key: "nodes", Value: []toon.Object{
			{{Key: "_key", Value: "fetch-api"}, {Key: "type", Value: "api-call"}, {Key: "sheet", Value: "0"}},
			{{Key: "_key", Value: "root"}, {Key: "type", Value: "starter"}, {Key: "sheet", Value: "0"}},
		}},
		{Key: "tags", Value: []string{"nba", "stats"}},
	}
	fmt.Println(toon.Encode(ctx, toon.Options{}))
	// Output:
	// query: what does fetch-api do?
	// nodes[2]{_key,type,sheet}:
	//   fetch-api,api-call,"0"
	//   root,starter,"0"
	// tags[2]: nba,stats
}

func ExampleParseJSON() {
	v, err := toon.ParseJSON([]byte(`{"b": [1, 2.50], "a": {"x": null}}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(toon.Encode(v, toon.Options{Delimiter: '|'}))
	// Output:
	// b[2|]: 1|2.5
	// a:
	//   x: null
}
