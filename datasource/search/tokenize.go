package search

import (
	"strings"
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
		splitCamelASCII(w, emit)
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

func splitCamelASCII(w string, emit func(string)) {
	isUp := func(c byte) bool { return 'A' <= c && c <= 'Z' }
	isLo := func(c byte) bool { return 'a' <= c && c <= 'z' }
	isDig := func(c byte) bool { return '0' <= c && c <= '9' }
	start := 0
	for i := 1; i < len(w); i++ {
		prev, cur := w[i-1], w[i]
		switch {
		case isUp(cur) && (isLo(prev) || isDig(prev)):
			emitASCII(w[start:i], emit)
			start = i
		case isLo(cur) && isUp(prev) && i-1 > start && isUp(w[i-2]):
			emitASCII(w[start:i-1], emit)
			start = i - 1
		}
	}
	emitASCII(w[start:], emit)
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
	var b strings.Builder
	for _, r := range part {
		b.WriteString(foldRune(r))
	}
	if b.Len() > 0 {
		emit(b.String())
	}
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

// stem is a deliberately light English/French suffix stripper: it only has to map
// the forms people type in questions ("handles", "handler", "errors", "filtered",
// "validation") onto the same term as the identifiers they name. Index and query
// use the same function, so consistency matters more than linguistic accuracy.
func stem(w string) string {
	if len(w) <= 3 || !isASCIIWord(w) {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:len(w)-1]
	}
	switch {
	case strings.HasSuffix(w, "ation") && len(w) >= 8:
		w = w[:len(w)-3] // validation → validat
	case strings.HasSuffix(w, "ing") && len(w) >= 6:
		w = w[:len(w)-3]
	case strings.HasSuffix(w, "ed") && len(w) >= 5:
		w = w[:len(w)-2]
	}
	switch {
	case strings.HasSuffix(w, "er") && len(w) >= 6:
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "e") && len(w) >= 5:
		w = w[:len(w)-1]
	}
	return w
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
	_, ok := stopWords[tok]
	return ok
}

// stopWords is read-only after initialisation. Tokens are folded (no accents).
var stopWords = func() map[string]struct{} {
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
}()

// synonyms expands a folded, unstemmed query word into English terms the graph
// identifiers use. Node keys and code are written in English while many questions
// are French, so the French side of the table matters most; the few English
// entries cover the usual paraphrases ("show" for display, "get" for fetch).
// Expansions score below the word itself.
var synonyms = map[string][]string{
	// French → English
	"erreur": {"error"}, "erreurs": {"error"}, "echec": {"fail", "error"}, "echecs": {"fail", "error"},
	"echoue": {"fail"}, "gere": {"handle"}, "gerer": {"handle"}, "gestion": {"handle"},
	"filtre": {"filter"}, "filtrer": {"filter"}, "filtres": {"filter"}, "filtrage": {"filter"},
	"recupere": {"fetch", "get"}, "recuperer": {"fetch", "get"}, "recuperation": {"fetch"},
	"appel": {"call", "request"}, "appelle": {"call"}, "appeler": {"call"},
	"affiche": {"display", "render"}, "afficher": {"display", "render"}, "affichage": {"display", "render"},
	"tri": {"sort"}, "trie": {"sort"}, "trier": {"sort"}, "classement": {"rank", "sort"},
	"donnees": {"data"}, "donnee": {"data"}, "paiement": {"payment", "pay"}, "payer": {"pay", "payment"},
	"commande": {"order"}, "commandes": {"order"}, "utilisateur": {"user"}, "utilisateurs": {"user"},
	"client": {"customer"}, "clients": {"customer"}, "formulaire": {"form"}, "entree": {"entry", "input"},
	"sortie": {"output", "return"}, "resultat": {"result", "return"}, "renvoie": {"return"},
	"envoie": {"send"}, "envoyer": {"send"}, "envoi": {"send"}, "courriel": {"email", "mail"},
	"stock": {"inventory", "stock"}, "stocks": {"inventory", "stock"}, "livraison": {"shipping", "delivery"},
	"expedition": {"shipping", "ship"}, "expedie": {"ship"}, "facture": {"invoice"}, "factures": {"invoice"},
	"remboursement": {"refund"}, "rembourse": {"refund"}, "annule": {"cancel"}, "annulation": {"cancel"},
	"panier": {"cart"}, "prix": {"price"}, "taxe": {"tax"}, "taxes": {"tax"}, "remise": {"discount"},
	"fraude": {"fraud"}, "adresse": {"address"}, "valide": {"validate"}, "valider": {"validate"},
	"validation": {"validate"}, "verifie": {"check", "verify"}, "verifier": {"check", "verify"},
	"verification": {"check", "verify"}, "journal": {"log"}, "journalise": {"log"}, "journaux": {"log"},
	"deploie": {"deploy"}, "deployer": {"deploy"}, "deploiement": {"deploy"}, "construit": {"build"},
	"construire": {"build"}, "compilation": {"build", "compile"}, "tests": {"test"}, "teste": {"test"},
	"rapport": {"report"}, "couverture": {"coverage"}, "securite": {"security"}, "analyse": {"scan", "analyze"},
	"depot": {"repository", "repo"}, "branche": {"branch"}, "fusion": {"merge"}, "approbation": {"approval", "approve"},
	"approuve": {"approve"}, "notifie": {"notify"}, "notification": {"notify"}, "alerte": {"alert"},
	"joueur": {"player"}, "joueurs": {"player"}, "equipe": {"team"}, "equipes": {"team"},
	"statistiques": {"stats", "statistic"}, "statistique": {"stats", "statistic"}, "actif": {"active"},
	"actifs": {"active"}, "calcule": {"compute", "calculate"}, "calculer": {"compute", "calculate"},
	"debut": {"start", "entry"}, "depart": {"start", "entry"}, "demarre": {"start"}, "fin": {"end", "return"},
	"dernier": {"last", "return"}, "premier": {"first", "entry"}, "isole": {"disconnected"},
	"deconnecte": {"disconnected"}, "note": {"note", "comment"}, "page": {"html", "page"},
	"attente":  {"wait", "queue"},
	"reessaie": {"retry"}, "tentative": {"retry", "attempt"}, "image": {"image", "docker"},
	"conteneur": {"container", "docker"}, "production": {"prod", "production"}, "recette": {"staging"},
	"sauvegarde": {"save", "store", "persist"}, "enregistre": {"save", "store", "persist"},
	"transforme": {"transform", "map"}, "transformation": {"transform"},
	"vente": {"sales", "sale"}, "ventes": {"sales", "sale"}, "quotidien": {"daily"}, "quotidienne": {"daily"},
	"quotidiennes": {"daily"}, "tableau": {"table", "dashboard"}, "suivi": {"tracking", "track"},
	"numero": {"number"}, "colis": {"package", "parcel", "shipment"}, "etiquette": {"label"},
	"imprime": {"print"}, "imprimer": {"print"}, "entrepot": {"warehouse"}, "livre": {"delivered", "deliver"},
	"livree": {"delivered", "deliver"}, "risque": {"risk"}, "montant": {"amount", "total"}, "carte": {"card"},
	"refusee": {"declined", "decline"}, "refuse": {"declined", "decline", "reject"}, "refus": {"decline", "reject"},
	"tva": {"vat", "tax"}, "recu": {"receipt"}, "attendre": {"wait"}, "delai": {"delay", "timeout"},
	"jours": {"days"}, "jour": {"day"}, "regle": {"rule", "policy"}, "politique": {"policy"},
	"reserve": {"reserve"}, "reserver": {"reserve"}, "libere": {"release"}, "liberer": {"release"},
	"manuelle": {"manual"}, "revue": {"review"}, "saison": {"season"}, "defaut": {"default"},
	"minimum": {"minimum", "min"}, "matchs": {"games"}, "joues": {"played"}, "points": {"points", "pts"},
	"relie": {"connected"}, "connecte": {"connected"}, "nouvelles": {"new"}, "nouvelle": {"new"},
	// English paraphrases
	"shows": {"display"}, "render": {"display", "html"}, "renders": {"display", "html"},
	"retrieve": {"fetch"}, "retrieves": {"fetch"}, "download": {"fetch"},
	"downloads": {"fetch"}, "failure": {"error", "fail"}, "failures": {"error", "fail"},
	"exception": {"error"}, "exceptions": {"error"}, "start": {"entry", "start"}, "begin": {"entry", "start"},
	"end": {"return", "end"}, "output": {"return", "output"}, "isolated": {"disconnected"},
	"unconnected": {"disconnected"}, "orphan": {"disconnected"}, "mail": {"email"}, "emails": {"email"},
	"ship": {"shipping"}, "ships": {"shipping"}, "charge": {"payment", "charge"}, "charges": {"payment", "charge"},
	"pay": {"payment"}, "pays": {"payment"},
	"comment": {"note"}, "deploys": {"deploy"}, "ranking": {"sort", "rank"},
}
