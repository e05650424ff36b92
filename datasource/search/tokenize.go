package search

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Tokens splits s into lowercase, accent-free words the way the index does, before
// stop-word removal and stemming: identifiers are split on punctuation and on
// camelCase boundaries, so `fetch-api`, `fetchApi`, `fetch_api` and `FetchAPI` all
// give ["fetch", "api"]. It is exported so callers (and tests) can see what the
// index sees.
func Tokens(s string) []string {
	var out []string
	forEachToken(s, func(t string) { out = append(out, t) })
	return out
}

// forEachToken calls emit for every token of s, in order. It never panics,
// whatever bytes s holds: invalid UTF-8 decodes to U+FFFD, which is a separator.
func forEachToken(s string, emit func(string)) {
	start := -1 // byte offset of the current raw word, -1 when between words
	for i, r := range s {
		if isWordRune(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			splitCamel(s[start:i], emit)
			start = -1
		}
	}
	if start >= 0 {
		splitCamel(s[start:], emit)
	}
}

// isWordRune says which runes belong to words: letters, digits and combining marks
// (so decomposed accents stay inside the word and are dropped by folding).
func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r))
}

// splitCamel cuts a raw word (letters and digits only) at case changes:
// "fetchApi" → fetch|Api, "FetchAPIClient" → Fetch|API|Client, and emits each
// part folded. Digits stay with the letters before them ("html5", "v2").
func splitCamel(w string, emit func(string)) {
	ascii := true
	for i := 0; i < len(w); i++ {
		if w[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		splitCamelASCII(w, func(part string) { emitASCII(part, emit) })
		return
	}
	runes := []rune(w)
	start := 0
	for i := 1; i < len(runes); i++ {
		prev, cur := runes[i-1], runes[i]
		cut := false
		switch {
		case unicode.IsUpper(cur) && (unicode.IsLower(prev) || unicode.IsDigit(prev)):
			cut = true
		case unicode.IsLower(cur) && unicode.IsUpper(prev) && i-1 > start && unicode.IsUpper(runes[i-2]):
			// "APIClient": cut before the 'C' that starts the lowercase run.
			emitFolded(string(runes[start:i-1]), emit)
			start = i - 1
		}
		if cut {
			emitFolded(string(runes[start:i]), emit)
			start = i
		}
	}
	emitFolded(string(runes[start:]), emit)
}

// splitCamelASCII cuts an ASCII raw word as splitCamel does and calls part with
// each part as written (not yet lowercased; never empty).
func splitCamelASCII(w string, part func(string)) {
	isUp := func(c byte) bool { return 'A' <= c && c <= 'Z' }
	isLo := func(c byte) bool { return 'a' <= c && c <= 'z' }
	isDig := func(c byte) bool { return '0' <= c && c <= '9' }
	start := 0
	for i := 1; i < len(w); i++ {
		prev, cur := w[i-1], w[i]
		switch {
		case isUp(cur) && (isLo(prev) || isDig(prev)):
			part(w[start:i])
			start = i
		case isLo(cur) && isUp(prev) && i-1 > start && isUp(w[i-2]):
			part(w[start : i-1])
			start = i - 1
		}
	}
	part(w[start:])
}

func emitASCII(part string, emit func(string)) {
	if part == "" {
		return
	}
	for i := 0; i < len(part); i++ {
		if 'A' <= part[i] && part[i] <= 'Z' {
			emit(strings.ToLower(part))
			return
		}
	}
	emit(part)
}

func emitFolded(part string, emit func(string)) {
	if f := fold(part); f != "" {
		emit(f)
	}
}

// fold lowercases s and strips its accents, rune by rune (foldRune). A word that is
// lowercase ASCII already (most code words) comes back as it is, uncopied.
func fold(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		b.WriteString(foldRune(r))
	}
	return b.String()
}

// foldRune lowercases r and strips its accent (é → e, œ → oe, ß → ss), because the
// questions are often French and typed with or without accents. Combining marks
// vanish. Scripts without a Latin base letter are only lowercased.
func foldRune(r rune) string {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		return string(r)
	}
	if unicode.Is(unicode.Mn, r) {
		return ""
	}
	r = unicode.ToLower(r)
	switch r {
	case 'à', 'á', 'â', 'ã', 'ä', 'å', 'ā', 'ă', 'ą':
		return "a"
	case 'ç', 'ć', 'ĉ', 'ċ', 'č':
		return "c"
	case 'ď', 'đ':
		return "d"
	case 'è', 'é', 'ê', 'ë', 'ē', 'ĕ', 'ė', 'ę', 'ě':
		return "e"
	case 'ĝ', 'ğ', 'ġ', 'ģ':
		return "g"
	case 'ì', 'í', 'î', 'ï', 'ĩ', 'ī', 'ĭ', 'į', 'ı':
		return "i"
	case 'ĺ', 'ļ', 'ľ', 'ŀ', 'ł':
		return "l"
	case 'ñ', 'ń', 'ņ', 'ň':
		return "n"
	case 'ò', 'ó', 'ô', 'õ', 'ö', 'ø', 'ō', 'ŏ', 'ő':
		return "o"
	case 'ŕ', 'ŗ', 'ř':
		return "r"
	case 'ś', 'ŝ', 'ş', 'š':
		return "s"
	case 'ţ', 'ť', 'ŧ':
		return "t"
	case 'ù', 'ú', 'û', 'ü', 'ũ', 'ū', 'ŭ', 'ů', 'ű', 'ų':
		return "u"
	case 'ý', 'ÿ', 'ŷ':
		return "y"
	case 'ź', 'ż', 'ž':
		return "z"
	case 'œ':
		return "oe"
	case 'æ':
		return "ae"
	case 'ß':
		return "ss"
	}
	return string(r)
}

func isASCIIWord(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// IsStopWord reports whether a folded token carries no meaning for ranking. Besides
// the usual English and French function words it holds the words every question
// about a graph uses ("node", "nœud", "graph", "step"), which would otherwise match
// everything or nothing useful.
func IsStopWord(tok string) bool {
	_, ok := stopWords()[tok]
	return ok
}

// stopWords is built on first use and read-only afterwards. Tokens are folded (no
// accents).
var stopWords = sync.OnceValue(func() map[string]struct{} {
	words := strings.Fields(`
a an the and or but if then so of in on at to for from by with without into onto about as
is are was were be been being am do does did doing done has have had having can could will
would shall should may might must i me my mine we us our you your yours he him his she her
it its they them their this that these those there here what which who whom whose when where
why how all any some each every no not nor only own same such than too very just also
please tell show explain describe give list find get me want need know let lets
node nodes step steps graph graphs workflow workflows thing things one ones
que quoi qui quel quelle quels quelles quelqu fait fais faire font faites le la les l un une
des du de d et ou est sont etre ce cet cette ces c ca cela ceci dans sur sous pour par avec
sans au aux a en y il elle ils elles on se s sa son ses leur leurs mon ma mes ton ta tes notre
nos votre vos je j tu nous vous me m te t moi toi lui ne n pas plus comment pourquoi quand
combien qu si donc alors car mais ni
explique expliquer decris decrire montre montrer dis dire donne donner liste
lister trouve trouver peux peut pouvez veux voudrais stp svp
noeud noeuds etape etapes graphe graphes
`)
	m := make(map[string]struct{}, len(words))
	for _, w := range words {
		m[w] = struct{}{}
	}
	return m
})
