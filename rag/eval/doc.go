// Package eval holds the evaluation of retrieval, apart from the product: the dev set
// retrieval is tuned against and seventeen held-out sets (testdata/, listed with their
// hashes and measured figures in testdata/manifest.json), measured by one test behind
// the eval build tag:
//
//	go test -tags eval ./rag/eval/ -v
//
// Without WordNet and FreeDict (apt-get install wordnet-base dict-freedict-fra-eng
// dict-freedict-eng-fra) the hybrid half is skipped. The figures are in
// docs/retrieval.md. rag's own tests keep a small quality floor that runs everywhere.
package eval
