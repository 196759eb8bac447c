package httpd

// byteSet is a set of bytes, for the parser's one-lookup tests.
type byteSet [256]bool

func (s *byteSet) has(c byte) bool { return s[c] }

func newByteSet(extra string) *byteSet {
	var s byteSet
	for c := '0'; c <= '9'; c++ {
		s[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		s[c], s[c-'a'+'A'] = true, true
	}
	for i := range len(extra) {
		s[extra[i]] = true
	}
	return &s
}

var (
	// tokenBytes are RFC 9110's tchar: a method's and a field name's.
	tokenBytes = newByteSet("!#$%&'*+-.^_`|~")
	// pathBytes are those a path keeps unescaped in net/url's form of
	// it (URL.EscapedPath gives them back as they came): with these
	// alone, URL.Path is the target's path and RawPath is empty.
	pathBytes = newByteSet("-._~$&+,/:;=@")
)

func isTokenBytes(b []byte) bool {
	for _, c := range b {
		if !tokenBytes.has(c) {
			return false
		}
	}
	return true
}
