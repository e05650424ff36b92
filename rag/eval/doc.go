// Package eval holds the evaluation of retrieval, apart from the product: the dev set
// retrieval is tuned against and seventeen held-out sets (testdata/, listed with their
// hashes and measured figures in testdata/manifest.json), measured by tests behind the
// eval build tag:
//
//	go test -tags eval ./rag/eval/ -v
//
// TestEval measures the sets as written, in nodius-ai's earlier graph format (code on
// nodes). TestRealModel converts them, losslessly, to Nodius's own model (code in the
// node type's config, opaque type keys), reads them as a user's Nodius-format file is
// read, measures everything both ways and holds that the real model does not fall
// (NODIUS_AI_EVAL_TABLE=FILE writes its table, as in docs/retrieval.md).
//
// Without WordNet and FreeDict (apt-get install wordnet-base dict-freedict-fra-eng
// dict-freedict-eng-fra) the hybrid half is skipped. The figures are in
// docs/retrieval.md. rag's own tests keep a small quality floor that runs everywhere.
package eval
