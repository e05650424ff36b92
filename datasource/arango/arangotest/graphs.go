package arangotest

// execGraphs answers the queries of graph creation and of its undo; ok is false
// for any other kind. The caller holds s.mu.
func (s *Server) execGraphs(k kind, b map[string]any) (res []any, status, num int, msg string, ok bool) {
	str := func(name string) string { v, _ := b[name].(string); return v }
	insert := func(coll string) ([]any, int, int, string, bool) {
		doc, _ := b["doc"].(map[string]any)
		key, _ := doc["_key"].(string)
		if _, dup := s.coll(coll)[key]; dup {
			return nil, 409, 1210, "unique constraint violated - in index primary of type primary over '_key'; conflicting key: " + key, true
		}
		doc["_id"], doc["_rev"] = coll+"/"+key, "1"
		s.coll(coll)[key] = doc
		return []any{clone(doc)}, 0, 0, "", true
	}
	remove := func(coll string, keep func(d map[string]any) bool) ([]any, int, int, string, bool) {
		var out []any
		for _, d := range s.sorted(coll, keep) {
			delete(s.colls[coll], d["_key"].(string))
			out = append(out, d["_key"])
		}
		return out, 0, 0, "", true
	}
	inWorkspace := func(d map[string]any) bool { return d["_key"] == str("key") && d["workspace"] == str("ws") }
	switch k {
	case kInsertGraph:
		return insert(Graphs)
	case kInsertHTMLClass:
		return insert(HTMLClasses)
	case kHTMLClass:
		return anys(s.sorted(HTMLClasses, inWorkspace)), 0, 0, "", true
	case kRemoveGraphNodes:
		return remove(Nodes, func(d map[string]any) bool { return d["graphKey"] == str("gk") })
	case kRemoveGraph:
		return remove(Graphs, inWorkspace)
	case kRemoveHTMLClass:
		return remove(HTMLClasses, inWorkspace)
	}
	return nil, 0, 0, "", false
}
