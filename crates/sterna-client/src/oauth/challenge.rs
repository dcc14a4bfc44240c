//! `WWW-Authenticate` challenges (RFC 9110 §11.6.1): a scheme, then a token68 or
//! comma-separated `name=value` parameters (token or quoted-string values); several
//! challenges may share one header. Scheme and parameter names are case-insensitive.

use std::fmt;

/// One authentication challenge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Challenge {
    scheme: String,
    token68: Option<String>,
    params: Vec<(String, String)>,
}

impl Challenge {
    /// The scheme, as sent (`Bearer`, `DPoP` …).
    pub fn scheme(&self) -> &str {
        &self.scheme
    }

    /// Whether the scheme is `scheme` (case-insensitive).
    pub fn is(&self, scheme: &str) -> bool {
        self.scheme.eq_ignore_ascii_case(scheme)
    }

    /// The token68 form's value, if the challenge has one instead of parameters.
    pub fn token68(&self) -> Option<&str> {
        self.token68.as_deref()
    }

    /// A parameter's value (the first if repeated); `name` is case-insensitive.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The parameters, names in lowercase, in order.
    pub fn params(&self) -> &[(String, String)] {
        &self.params
    }

    /// `resource_metadata` (RFC 9728 §5.1).
    pub fn resource_metadata(&self) -> Option<&str> {
        self.param("resource_metadata")
    }

    /// `scope`, split on spaces (empty when absent).
    pub fn scopes(&self) -> Vec<String> {
        split_scopes(self.param("scope"))
    }

    /// `error` (`invalid_token`, `insufficient_scope`, `use_dpop_nonce` …).
    pub fn error(&self) -> Option<&str> {
        self.param("error")
    }
}

/// Splits a space-delimited scope string.
pub(crate) fn split_scopes(s: Option<&str>) -> Vec<String> {
    s.map(|s| {
        s.split(' ')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect()
    })
    .unwrap_or_default()
}

/// Why a header is not a list of challenges.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChallengeError {
    /// A character where a scheme was expected.
    ExpectedScheme {
        /// The byte offset.
        at: usize,
    },
    /// A parameter without a value, or a value that is neither token nor quoted-string.
    BadParameter {
        /// The byte offset.
        at: usize,
    },
    /// A quoted-string that does not end.
    UnterminatedQuote,
    /// Something after a challenge that is not a comma.
    ExpectedComma {
        /// The byte offset.
        at: usize,
    },
}

impl fmt::Display for ChallengeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ExpectedScheme { at } => write!(f, "expected an auth-scheme at byte {at}"),
            Self::BadParameter { at } => write!(f, "malformed auth-param at byte {at}"),
            Self::UnterminatedQuote => f.write_str("unterminated quoted-string"),
            Self::ExpectedComma { at } => write!(f, "expected a comma at byte {at}"),
        }
    }
}

impl std::error::Error for ChallengeError {}

/// Parses one `WWW-Authenticate` field value into its challenges.
pub fn parse_challenges(header: &str) -> Result<Vec<Challenge>, ChallengeError> {
    let mut p = Parser {
        s: header.as_bytes(),
        i: 0,
    };
    let mut out = Vec::new();
    loop {
        p.skip_list_separators();
        if p.done() {
            return Ok(out);
        }
        let at = p.i;
        let scheme = p.token().ok_or(ChallengeError::ExpectedScheme { at })?;
        let mut challenge = Challenge {
            scheme,
            token68: None,
            params: Vec::new(),
        };
        let spaced = p.skip_ws();
        if spaced && !p.done() && p.peek() != Some(b',') {
            if p.at_param() {
                p.params(&mut challenge.params)?;
            } else {
                challenge.token68 = Some(p.token68()?);
            }
        }
        out.push(challenge);
        p.skip_ws();
        match p.peek() {
            None | Some(b',') => {}
            Some(_) => return Err(ChallengeError::ExpectedComma { at: p.i }),
        }
    }
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

fn is_tchar(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&c)
}

fn is_token68_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"-._~+/".contains(&c)
}

impl Parser<'_> {
    fn done(&self) -> bool {
        self.i >= self.s.len()
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn skip_ws(&mut self) -> bool {
        let start = self.i;
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.i += 1;
        }
        self.i > start
    }

    fn skip_list_separators(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b',')) {
            self.i += 1;
        }
    }

    fn token(&mut self) -> Option<String> {
        let start = self.i;
        while self.peek().is_some_and(is_tchar) {
            self.i += 1;
        }
        (self.i > start).then(|| String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
    }

    /// Whether the input here is `token BWS "=" BWS (token / quoted-string)`: an
    /// auth-param rather than a token68 or the next challenge's scheme.
    fn at_param(&self) -> bool {
        let mut j = self.i;
        let start = j;
        while self.s.get(j).copied().is_some_and(is_tchar) {
            j += 1;
        }
        if j == start {
            return false;
        }
        while matches!(self.s.get(j), Some(b' ' | b'\t')) {
            j += 1;
        }
        if self.s.get(j) != Some(&b'=') {
            return false;
        }
        j += 1;
        while matches!(self.s.get(j), Some(b' ' | b'\t')) {
            j += 1;
        }
        matches!(self.s.get(j), Some(&c) if c == b'"' || is_tchar(c))
    }

    fn token68(&mut self) -> Result<String, ChallengeError> {
        let start = self.i;
        while self.peek().is_some_and(is_token68_char) {
            self.i += 1;
        }
        while self.peek() == Some(b'=') {
            self.i += 1;
        }
        if self.i == start {
            return Err(ChallengeError::BadParameter { at: start });
        }
        Ok(String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
    }

    /// `auth-param *( OWS "," OWS auth-param )`, stopping before a comma that starts the
    /// next challenge.
    fn params(&mut self, out: &mut Vec<(String, String)>) -> Result<(), ChallengeError> {
        loop {
            let at = self.i;
            let name = self.token().ok_or(ChallengeError::BadParameter { at })?;
            self.skip_ws();
            self.i += 1; // '=' (checked by at_param)
            self.skip_ws();
            let value = if self.peek() == Some(b'"') {
                self.quoted()?
            } else {
                self.token()
                    .ok_or(ChallengeError::BadParameter { at: self.i })?
            };
            out.push((name.to_ascii_lowercase(), value));
            // Another parameter follows a comma only if it looks like one.
            let save = self.i;
            self.skip_ws();
            if self.peek() != Some(b',') {
                self.i = save;
                return Ok(());
            }
            self.skip_list_separators();
            if !self.at_param() {
                self.i = save;
                return Ok(());
            }
        }
    }

    fn quoted(&mut self) -> Result<String, ChallengeError> {
        self.i += 1;
        let mut v = Vec::new();
        loop {
            match self.peek() {
                None => return Err(ChallengeError::UnterminatedQuote),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(String::from_utf8_lossy(&v).into_owned());
                }
                Some(b'\\') => {
                    self.i += 1;
                    let c = self.peek().ok_or(ChallengeError::UnterminatedQuote)?;
                    v.push(c);
                    self.i += 1;
                }
                Some(c) => {
                    v.push(c);
                    self.i += 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(h: &str) -> Challenge {
        let mut v = parse_challenges(h).unwrap();
        assert_eq!(v.len(), 1, "{v:?}");
        v.remove(0)
    }

    #[test]
    fn bearer_with_params() {
        let c = one(
            r#"Bearer error="invalid_token", error_description="Missing Authorization header", resource_metadata="http://localhost:1/.well-known/oauth-protected-resource/mcp""#,
        );
        assert!(c.is("bearer"));
        assert_eq!(c.error(), Some("invalid_token"));
        assert_eq!(
            c.resource_metadata(),
            Some("http://localhost:1/.well-known/oauth-protected-resource/mcp")
        );
    }

    #[test]
    fn case_insensitive_names_and_scopes() {
        let c = one(r#"bEaReR SCOPE="mcp:basic  mcp:write", Error=insufficient_scope"#);
        assert_eq!(c.scopes(), ["mcp:basic", "mcp:write"]);
        assert_eq!(c.param("error"), Some("insufficient_scope"));
        assert_eq!(c.scheme(), "bEaReR");
    }

    #[test]
    fn escapes_and_commas_in_quotes() {
        let c = one(r#"Bearer realm="a \"quoted\", realm", scope="x""#);
        assert_eq!(c.param("realm"), Some(r#"a "quoted", realm"#));
        assert_eq!(c.scopes(), ["x"]);
    }

    #[test]
    fn several_challenges_in_one_header() {
        let v = parse_challenges(
            r#"Basic realm="simple", DPoP algs="ES256 PS256", error="use_dpop_nonce", Bearer resource_metadata="https://r/x""#,
        )
        .unwrap();
        let schemes: Vec<_> = v.iter().map(Challenge::scheme).collect();
        assert_eq!(schemes, ["Basic", "DPoP", "Bearer"]);
        assert_eq!(v[1].param("algs"), Some("ES256 PS256"));
        assert_eq!(v[1].error(), Some("use_dpop_nonce"));
        assert_eq!(v[2].resource_metadata(), Some("https://r/x"));
    }

    #[test]
    fn token68_and_bare_schemes() {
        let v = parse_challenges("Negotiate abc+/def==, Bearer, NTLM").unwrap();
        assert_eq!(v[0].token68(), Some("abc+/def=="));
        assert!(v[1].params().is_empty() && v[1].token68().is_none());
        assert!(v[2].is("ntlm"));
    }

    #[test]
    fn whitespace_around_equals_and_empty_elements() {
        let v = parse_challenges(r#" , Bearer scope = "a b" ,, realm=x , "#).unwrap();
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].scopes(), ["a", "b"]);
        assert_eq!(v[0].param("realm"), Some("x"));
    }

    #[test]
    fn errors() {
        assert_eq!(
            parse_challenges(r#"Bearer realm="open"#),
            Err(ChallengeError::UnterminatedQuote)
        );
        assert!(matches!(
            parse_challenges("=x"),
            Err(ChallengeError::ExpectedScheme { .. })
        ));
        assert!(matches!(
            parse_challenges(r#"Bearer a="b" c"#),
            Err(ChallengeError::ExpectedComma { .. })
        ));
        assert!(parse_challenges("").unwrap().is_empty());
    }
}
