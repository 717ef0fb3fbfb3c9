package checks

import (
	"strings"
	"unicode"
)

// LanguageUnknown is what DetectLanguage returns when it cannot tell.
const LanguageUnknown = "und"

// languageScript maps each language DetectLanguage knows (ISO 639-1) to its
// writing system. Languages that share a script are told apart by their
// commonest words and distinctive letters.
var languageScript = map[string]*unicode.RangeTable{
	"en": unicode.Latin, "de": unicode.Latin, "fr": unicode.Latin, "es": unicode.Latin,
	"pt": unicode.Latin, "it": unicode.Latin, "nl": unicode.Latin, "pl": unicode.Latin,
	"fi": unicode.Latin, "sw": unicode.Latin, "vi": unicode.Latin, "tr": unicode.Latin,
	"ru": unicode.Cyrillic, "uk": unicode.Cyrillic, "bg": unicode.Cyrillic,
	"ar": unicode.Arabic, "fa": unicode.Arabic, "ur": unicode.Arabic,
	"hi": unicode.Devanagari, "mr": unicode.Devanagari, "ne": unicode.Devanagari,
	"bn": unicode.Bengali, "pa": unicode.Gurmukhi, "gu": unicode.Gujarati, "ta": unicode.Tamil,
	"te": unicode.Telugu, "kn": unicode.Kannada, "ml": unicode.Malayalam, "th": unicode.Thai,
	"ko": unicode.Hangul, "ja": unicode.Hiragana, "zh": unicode.Han, "he": unicode.Hebrew,
	"el": unicode.Greek,
}

// languageScripts lists the scripts DetectLanguage counts. Japanese is counted
// through kana; Han characters alone mean Chinese.
var languageScripts = []*unicode.RangeTable{
	unicode.Latin, unicode.Cyrillic, unicode.Arabic, unicode.Devanagari, unicode.Bengali,
	unicode.Gurmukhi, unicode.Gujarati, unicode.Tamil, unicode.Telugu, unicode.Kannada,
	unicode.Malayalam, unicode.Thai, unicode.Hangul, unicode.Hiragana, unicode.Katakana,
	unicode.Han, unicode.Hebrew, unicode.Greek,
}

// languageProfile tells apart the languages of one script.
type languageProfile struct {
	code      string
	stopwords map[string]bool
	letters   string // letters used by this language and few others of its script
}

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// languageProfiles holds the shared-script languages, by script.
var languageProfiles = map[*unicode.RangeTable][]languageProfile{
	unicode.Latin: {
		{"en", wordSet("the and of to is in that it for was with as are be this have not you but on by from they we his her or a an at which will would there their what can has were been if my your our he she do does i am me who how when where why so all about just than then them these those its"), ""},
		{"de", wordSet("der die das und ist nicht ein eine zu den von mit sich des auf für im dem auch es sie ich wir sind wird werden oder aber wie bei nach einer noch nur über"), "äöüß"},
		{"fr", wordSet("le la les et est des une un du que pour dans qui pas sur au avec ce il elle nous vous sont mais ou par plus être ne aux cette"), "éèêàçùœ"},
		{"es", wordSet("el la los las y es de que en un una por con para del se no lo al su sus como más pero está son este esta muy también"), "ñáéíóú¿¡"},
		{"pt", wordSet("o a os as e é de que em um uma para com do da dos das não se por mais mas como ao sua seu são está também muito"), "ãõçáéêó"},
		{"it", wordSet("il lo la gli le e è di che in un una per con del della dei non si sono come più ma anche questo questa nel alla"), "àèéìòù"},
		{"nl", wordSet("de het een en van is dat niet op te zijn met voor die ook als er maar om bij aan wordt naar hij zij wij"), ""},
		{"pl", wordSet("i w na nie z się to że do jest jak ale o co po przez dla od tak jego jej są być może"), "ąćęłńóśźż"},
		{"fi", wordSet("ja on ei se että oli ovat kuin mutta tai myös niin joka jos kun hän me te he ne tämä siitä sen ole voi"), "äö"},
		{"sw", wordSet("na ya wa ni kwa za la katika ili kama lakini hii huo yake wake hiyo sana pia au bila watu kuwa kwamba hata"), ""},
		{"vi", wordSet("và của là có không những được một cho này các với người trong để đã khi như thì cũng rất nhưng"), "ăâđêôơưạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ"},
		{"tr", wordSet("ve bir bu da de için ile çok ne gibi daha olan olarak ama ben sen o biz siz onlar değil var yok"), "çğışöü"},
	},
	unicode.Cyrillic: {
		{"ru", wordSet("и в не на что с по как это он она они из за от у же но так для мы вы к его её бы или был была было только"), "ыэё"},
		{"uk", wordSet("і в не на що з та як це він вона вони із за від у але так для ми ви до його її чи був була було тільки"), "іїєґ"},
		{"bg", wordSet("и в не на че с по като това той тя те от за но така за ние вие до го ще са е съм бе"), "ъ"},
	},
	unicode.Arabic: {
		{"ar", wordSet("في من على إلى أن هذا هذه التي الذي مع عن كان لا ما هو هي كل بين"), "ةى"},
		{"fa", wordSet("و در به از که این را با است برای آن یک تا می شود بود هم نیز"), "پچژگ"},
		{"ur", wordSet("اور میں کے کی کا ہے کو سے یہ وہ نہیں ہیں تھا پر بھی ایک"), "ےٹڈڑںہھ"},
	},
	unicode.Devanagari: {
		{"hi", wordSet("है और के की में से का को नहीं यह एक हैं पर भी था कि लिए आप हम वह तो इस"), ""},
		{"mr", wordSet("आहे आणि या हे की व ते मी आम्ही आहेत होते केले करण्यासाठी त्याच्या त्यांच्या नाही हा ही तुम्ही आपण"), "ळ"},
		{"ne", wordSet("छ र को मा हो गर्न पनि भएको छन् यो त्यो तर हुन्छ थियो गरेको लागि"), ""},
	},
}

// uniqueScripts are scripts written by one language here.
var uniqueScripts = map[*unicode.RangeTable]string{
	unicode.Bengali: "bn", unicode.Gurmukhi: "pa", unicode.Gujarati: "gu", unicode.Tamil: "ta",
	unicode.Telugu: "te", unicode.Kannada: "kn", unicode.Malayalam: "ml", unicode.Thai: "th",
	unicode.Hangul: "ko", unicode.Hiragana: "ja", unicode.Katakana: "ja", unicode.Han: "zh",
	unicode.Hebrew: "he", unicode.Greek: "el",
}

// DetectLanguage returns the ISO 639-1 code of the main language of text,
// or LanguageUnknown. It is deterministic: it finds the script with the
// most letters, then, for scripts several languages share, the language
// whose common words and distinctive letters occur most. Japanese is
// recognised by kana (even among Han characters). Short texts without any
// common word of their script come out unknown.
func DetectLanguage(text string) string {
	counts := make([]int, len(languageScripts))
	for _, r := range text {
		if r < 0x80 { // ASCII: only its letters count, and they are Latin
			if 'a' <= r|0x20 && r|0x20 <= 'z' {
				counts[0]++
			}
			continue
		}
		if !unicode.IsLetter(r) && !unicode.IsMark(r) {
			continue
		}
		for i, t := range languageScripts {
			if unicode.Is(t, r) {
				counts[i]++
				break
			}
		}
	}
	best := -1
	for i, n := range counts {
		if n > 0 && (best < 0 || n > counts[best]) {
			best = i
		}
	}
	if best < 0 {
		return LanguageUnknown
	}
	script := languageScripts[best]
	if script == unicode.Han || script == unicode.Hiragana || script == unicode.Katakana {
		for i, t := range languageScripts {
			if (t == unicode.Hiragana || t == unicode.Katakana) && counts[i] > 0 {
				return "ja"
			}
		}
		return "zh"
	}
	if code, ok := uniqueScripts[script]; ok {
		return code
	}
	return bestProfile(strings.ToLower(text), languageProfiles[script], profileWords[script])
}

// profileWords maps, per script, each common word to the indexes of the
// languageProfiles that list it, so a word costs one lookup.
var profileWords = func() map[*unicode.RangeTable]map[string][]int {
	out := map[*unicode.RangeTable]map[string][]int{}
	for script, ps := range languageProfiles {
		m := map[string][]int{}
		for i, p := range ps {
			for w := range p.stopwords {
				m[w] = append(m[w], i)
			}
		}
		out[script] = m
	}
	return out
}()

// bestProfile scores each profile by common words found plus three per
// distinctive letter found, and returns the best, or LanguageUnknown on no
// evidence or a tie.
func bestProfile(lower string, ps []languageProfile, common map[string][]int) string {
	scores := make([]int, len(ps))
	start := -1
	word := func(end int) {
		if start >= 0 {
			for _, i := range common[lower[start:end]] {
				scores[i]++
			}
			start = -1
		}
	}
	for at, r := range lower {
		if unicode.IsLetter(r) || unicode.IsMark(r) {
			if start < 0 {
				start = at
			}
			if r >= 0x80 { // distinctive letters are never ASCII
				for i, p := range ps {
					if strings.ContainsRune(p.letters, r) {
						scores[i] += 3
					}
				}
			}
			continue
		}
		word(at)
	}
	word(len(lower))
	best, bestScore, tie := LanguageUnknown, 0, false
	for i, score := range scores {
		switch {
		case score > bestScore:
			best, bestScore, tie = ps[i].code, score, false
		case score == bestScore && score > 0:
			tie = true
		}
	}
	if tie {
		return LanguageUnknown
	}
	return best
}
