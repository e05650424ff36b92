package tools

import (
	"context"
	"fmt"
	"testing"
)

func TestScratch(t *testing.T) {
	x := NewExecutor(loadDemo(t), "demo")
	for _, c := range [][2]string{
		{ReadGraphOverview, `{}`},
		{SearchNodes, `{"query":"fetch api","maxResults":3}`},
		{ExploreNeighborhood, `{"nodeKey":"fetch-api"}`},
		{ReadNodeDetail, `{"nodeKey":"fetch-api"}`},
		{ReadNodeConfig, `{"typeKey":"api-call"}`},
		{ListAvailableNodeTypes, ``},
		{ListNodeEdges, `{"nodeKey":"fetch-api","direction":"outbound"}`},
		{ReadNodeDetail, `{"nodeKey":"fetch_api"}`},
		{SearchNodes, `{"query":"x","maxResults":0}`},
	} {
		out, err := x.Run(context.Background(), c[0], c[1])
		fmt.Printf("== %s %s\n%s\nerr=%v\n", c[0], c[1], out, err)
	}
}
