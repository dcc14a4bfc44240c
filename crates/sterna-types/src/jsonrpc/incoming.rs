//! Decoding anything that arrives: [`RawMessage::parse`] and [`Incoming`], with
//! `params`/`result` kept as borrowed raw JSON.

use super::{RequestId, Str};
use crate::error::{ErrorCode, ErrorObject};
use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

/// The `id` member of a message as found: absent, `null`, or an id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum IdField {
    /// No `id` member.
    #[default]
    Absent,
    /// `"id": null`.
    Null,
    /// A well-formed id.
    Id(RequestId),
    /// An `id` of the wrong type (boolean, float, object …).
    Invalid,
}

impl<'de> Deserialize<'de> for IdField {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = IdField;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a request id")
            }
            fn visit_unit<E: de::Error>(self) -> Result<IdField, E> {
                Ok(IdField::Null)
            }
            fn visit_none<E: de::Error>(self) -> Result<IdField, E> {
                Ok(IdField::Null)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<IdField, E> {
                Ok(IdField::Id(RequestId::Number(v)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<IdField, E> {
                Ok(
                    i64::try_from(v)
                        .map_or(IdField::Invalid, |n| IdField::Id(RequestId::Number(n))),
                )
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<IdField, E> {
                Ok(IdField::Invalid)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<IdField, E> {
                Ok(IdField::Invalid)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<IdField, E> {
                Ok(IdField::Id(RequestId::String(v.to_owned())))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut a: A) -> Result<IdField, A::Error> {
                while a.next_element::<de::IgnoredAny>()?.is_some() {}
                Ok(IdField::Invalid)
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut a: A) -> Result<IdField, A::Error> {
                while a.next_entry::<de::IgnoredAny, de::IgnoredAny>()?.is_some() {}
                Ok(IdField::Invalid)
            }
        }
        d.deserialize_any(V)
    }
}

/// Any JSON-RPC message as received, with `params`/`result` left as raw JSON.
#[derive(Debug, Deserialize)]
pub struct RawMessage<'a> {
    /// The `jsonrpc` member, if any.
    #[serde(default, borrow)]
    pub jsonrpc: Option<Cow<'a, str>>,
    /// The `id` member.
    #[serde(default)]
    pub id: IdField,
    /// The `method` member.
    #[serde(default, borrow)]
    pub method: Option<Cow<'a, str>>,
    /// The `params` member (`null` reads as absent).
    #[serde(default, borrow)]
    pub params: Option<&'a RawValue>,
    /// The `result` member.
    #[serde(default, borrow)]
    pub result: Option<&'a RawValue>,
    /// The `error` member.
    #[serde(default)]
    pub error: Option<ErrorObject>,
}

/// A message classified by shape.
#[derive(Debug)]
pub enum Incoming<'a> {
    /// A request: it has an id and a method.
    Request {
        /// The id.
        id: RequestId,
        /// The method name.
        method: Cow<'a, str>,
        /// The raw params.
        params: Option<&'a RawValue>,
    },
    /// A notification: a method without an id.
    Notification {
        /// The method name.
        method: Cow<'a, str>,
        /// The raw params.
        params: Option<&'a RawValue>,
    },
    /// A successful response.
    Result {
        /// The id answered.
        id: RequestId,
        /// The raw result.
        result: &'a RawValue,
    },
    /// An error response.
    Error {
        /// The id answered, if it was known.
        id: Option<RequestId>,
        /// The error.
        error: ErrorObject,
    },
}

/// Why a message could not be read, as the error to send back.
#[derive(Debug, Clone, PartialEq)]
pub struct Malformed {
    /// The id, when it could be read (so the error response can carry it).
    pub id: Option<RequestId>,
    /// The error to answer with (`-32700` or `-32600`).
    pub error: ErrorObject,
}

impl<'a> RawMessage<'a> {
    /// Parses and classifies one message. Batches (JSON arrays) are refused: 2026-07-28
    /// sends exactly one message per line or POST.
    pub fn parse(bytes: &'a [u8]) -> Result<Incoming<'a>, Malformed> {
        let raw: RawMessage<'a> = match serde_json::from_slice(bytes) {
            Ok(raw) => raw,
            Err(e) => return Err(Self::parse_failure(bytes, e)),
        };
        raw.classify()
    }

    fn parse_failure(bytes: &[u8], e: serde_json::Error) -> Malformed {
        use serde_json::error::Category;
        let (code, message) = match e.classify() {
            Category::Syntax | Category::Eof | Category::Io => {
                (ErrorCode::PARSE_ERROR, format!("Parse error: {e}"))
            }
            Category::Data => {
                let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
                let msg = match first {
                    Some(b'[') => "Invalid request: batches are not supported".to_owned(),
                    Some(b'{') => format!("Invalid request: {e}"),
                    _ => "Invalid request: a JSON-RPC message is a JSON object".to_owned(),
                };
                (ErrorCode::INVALID_REQUEST, msg)
            }
        };
        Malformed {
            id: None,
            error: ErrorObject::new(code, message),
        }
    }

    /// Reads a request and its params in one pass: the fast path for servers, which
    /// otherwise walk the params twice (once to find their end, once to decode them).
    ///
    /// `params_for` gets the method name and returns the seed that decodes that method's
    /// params (an object; arrays are refused), or `None` to decline. The result is `None`
    /// for anything but a plain, valid request whose `jsonrpc`, `id` and `method`
    /// precede `params`: notifications, responses, other member orders, declined
    /// methods, params that fail to decode, bytes that are not UTF-8 (even inside a
    /// member this reader skips). [`RawMessage::parse`] then reads the message and
    /// reports any error, so this function never decides what is wrong.
    pub fn parse_request_with<P, F>(
        bytes: &'a [u8],
        params_for: F,
    ) -> Option<(RequestId, Cow<'a, str>, P::Value)>
    where
        P: de::DeserializeSeed<'a>,
        F: FnOnce(&str) -> Option<P>,
    {
        // Skipped members are not checked for UTF-8 by serde_json: check the whole text
        // first, so that this reader and `parse` agree on what is JSON.
        let text = std::str::from_utf8(bytes).ok()?;
        let mut de = serde_json::Deserializer::from_str(text);
        let parsed = de::Deserializer::deserialize_map(
            &mut de,
            RequestVisitor {
                params_for: Some(params_for),
                _seed: std::marker::PhantomData,
            },
        )
        .ok()?;
        de.end().ok()?;
        Some(parsed)
    }

    /// Classifies an already parsed message.
    pub fn classify(self) -> Result<Incoming<'a>, Malformed> {
        let id = match &self.id {
            IdField::Id(id) => Some(id.clone()),
            _ => None,
        };
        let invalid = |msg: &str| Malformed {
            id: id.clone(),
            error: ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                format!("Invalid request: {msg}"),
            ),
        };
        if self.jsonrpc.as_deref() != Some("2.0") {
            return Err(invalid("jsonrpc must be \"2.0\""));
        }
        match (self.id, self.method) {
            (IdField::Id(id), Some(method)) => {
                if self.result.is_some() || self.error.is_some() {
                    return Err(invalid("a request must not carry result or error"));
                }
                Ok(Incoming::Request {
                    id,
                    method,
                    params: self.params,
                })
            }
            (IdField::Absent, Some(method)) => Ok(Incoming::Notification {
                method,
                params: self.params,
            }),
            (IdField::Null, Some(_)) => Err(invalid("id must not be null")),
            (IdField::Invalid, _) => Err(invalid("id must be a string or an integer")),
            (id_field, None) => match (self.result, self.error) {
                (Some(result), None) => match id_field {
                    IdField::Id(id) => Ok(Incoming::Result { id, result }),
                    _ => Err(invalid("a result must carry the request id")),
                },
                (None, Some(error)) => Ok(Incoming::Error {
                    id: match id_field {
                        IdField::Id(id) => Some(id),
                        _ => None,
                    },
                    error,
                }),
                (Some(_), Some(_)) => Err(invalid("a response carries result or error, not both")),
                (None, None) => Err(invalid("missing method")),
            },
        }
    }
}

/// Visits a request envelope for [`RawMessage::parse_request_with`]; every surprise is
/// an error (the caller falls back to [`RawMessage::parse`]).
struct RequestVisitor<P, F> {
    params_for: Option<F>,
    _seed: std::marker::PhantomData<P>,
}

impl<'a, P, F> Visitor<'a> for RequestVisitor<P, F>
where
    P: de::DeserializeSeed<'a>,
    F: FnOnce(&str) -> Option<P>,
{
    type Value = (RequestId, Cow<'a, str>, P::Value);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC request")
    }

    fn visit_map<A: de::MapAccess<'a>>(mut self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut version = false;
        let mut id = None;
        let mut method: Option<Cow<'a, str>> = None;
        let mut params = None;
        let refuse = || de::Error::custom("not the fast path");
        while let Some(Str(key)) = map.next_key::<Str<'a>>()? {
            match key.as_ref() {
                "jsonrpc" if !version => {
                    version = map.next_value::<Str<'a>>()?.0 == "2.0";
                    if !version {
                        return Err(refuse());
                    }
                }
                "id" if id.is_none() => id = Some(map.next_value::<RequestId>()?),
                "method" if method.is_none() => method = Some(map.next_value::<Str<'a>>()?.0),
                "params" if params.is_none() => {
                    let m = method.as_deref().ok_or_else(refuse)?;
                    let f = self.params_for.take().ok_or_else(refuse)?;
                    let seed = f(m).ok_or_else(refuse)?;
                    params = Some(map.next_value_seed(ObjectSeed(seed))?);
                }
                "jsonrpc" | "id" | "method" | "params" | "result" | "error" => {
                    return Err(refuse());
                }
                _ => {
                    map.next_value::<de::IgnoredAny>()?;
                }
            }
        }
        match (version, id, method, params) {
            (true, Some(id), Some(method), Some(params)) => Ok((id, method, params)),
            _ => Err(refuse()),
        }
    }
}

/// Runs a seed on a JSON object only.
struct ObjectSeed<P>(P);

impl<'a, P: de::DeserializeSeed<'a>> de::DeserializeSeed<'a> for ObjectSeed<P> {
    type Value = P::Value;

    fn deserialize<D: Deserializer<'a>>(self, d: D) -> Result<P::Value, D::Error> {
        struct V<P>(P);
        impl<'a, P: de::DeserializeSeed<'a>> Visitor<'a> for V<P> {
            type Value = P::Value;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: de::MapAccess<'a>>(self, a: A) -> Result<P::Value, A::Error> {
                self.0.deserialize(de::value::MapAccessDeserializer::new(a))
            }
        }
        d.deserialize_map(V(self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_that_is_not_an_object_is_told_so_in_protocol_terms() {
        for bad in [&b"\"hello\""[..], b"42", b"null", b"true", b" \n 7"] {
            let e = RawMessage::parse(bad).unwrap_err();
            assert_eq!(e.error.code, ErrorCode::INVALID_REQUEST);
            assert_eq!(
                e.error.message,
                "Invalid request: a JSON-RPC message is a JSON object",
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        let e = RawMessage::parse(b" [1]").unwrap_err();
        assert_eq!(
            e.error.message,
            "Invalid request: batches are not supported"
        );
    }

    #[test]
    fn ids() {
        let m = RawMessage::parse(br#"{"jsonrpc":"2.0","id":7,"method":"x"}"#).unwrap();
        assert!(matches!(
            m,
            Incoming::Request {
                id: RequestId::Number(7),
                ..
            }
        ));
        let m = RawMessage::parse(br#"{"jsonrpc":"2.0","id":"a","method":"x","params":null}"#);
        assert!(matches!(m, Ok(Incoming::Request { params: None, .. })));
        for bad in [
            r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":true,"method":"x"}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"x"}"#,
            r#"{"id":1,"method":"x"}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"x"}]"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":5}"#,
        ] {
            let e = RawMessage::parse(bad.as_bytes()).unwrap_err();
            assert_eq!(e.error.code, ErrorCode::INVALID_REQUEST, "{bad}");
        }
        let e = RawMessage::parse(b"{not json").unwrap_err();
        assert_eq!(e.error.code, ErrorCode::PARSE_ERROR);
        assert!(serde_json::from_str::<RequestId>("null").is_err());
        assert!(serde_json::from_str::<RequestId>("2.5").is_err());
    }

    #[test]
    fn bytes_that_are_not_utf8_are_no_request_to_either_reader() {
        // A stray byte in a member the one-pass reader skips (found by fuzzing: HTTP
        // answered -32601 with the id, stdio -32700 without).
        let mut m =
            br#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"name":"x","junk":"?"}}"#.to_vec();
        let at = m.iter().position(|&b| b == b'?').unwrap();
        m[at] = 0xFF;
        let seed = |_: &str| Some(std::marker::PhantomData::<serde::de::IgnoredAny>);
        assert!(RawMessage::parse_request_with(&m, seed).is_none());
        let e = RawMessage::parse(&m).unwrap_err();
        assert_eq!(e.error.code, ErrorCode::PARSE_ERROR);
    }

    #[test]
    fn a_response_with_both_result_and_error_says_so() {
        let e = RawMessage::parse(
            br#"{"jsonrpc":"2.0","id":3,"result":{},"error":{"code":1,"message":"m"}}"#,
        )
        .unwrap_err();
        assert_eq!(e.error.code, ErrorCode::INVALID_REQUEST);
        assert!(e.error.message.contains("not both"), "{}", e.error.message);
        assert_eq!(e.id, Some(RequestId::Number(3)));
    }

    #[test]
    fn error_keeps_id_when_readable() {
        let e =
            RawMessage::parse(br#"{"jsonrpc":"2.0","id":9,"method":"x","result":{}}"#).unwrap_err();
        assert_eq!(e.id, Some(RequestId::Number(9)));
    }

    #[test]
    fn one_pass_requests() {
        #[derive(Deserialize)]
        struct P<'a> {
            #[serde(borrow)]
            name: Cow<'a, str>,
        }
        let seed = |m: &str| (m != "skip").then_some(std::marker::PhantomData::<P<'_>>);
        let ok = br#"{"jsonrpc":"2.0","id":"a","method":"tools/call","extra":[1],"params":{"name":"x","more":1}}"#;
        let (id, method, p) = RawMessage::parse_request_with(ok, seed).unwrap();
        assert_eq!(id, RequestId::String("a".into()));
        assert_eq!(method, "tools/call");
        assert!(matches!(method, Cow::Borrowed(_)));
        assert!(matches!(p.name, Cow::Borrowed("x")));
        // Everything unusual is declined (and left to `parse`).
        for declined in [
            r#"{"jsonrpc":"2.0","id":1,"params":{"name":"x"},"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"skip","params":{"name":"x"}}"#,
            r#"{"jsonrpc":"2.0","method":"m","params":{"name":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"m","params":{"name":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"m","params":{"name":"x"}}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"m","params":{"name":"x"}}"#,
            r#"{"id":1,"method":"m","params":{"name":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":["x"]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"name":5}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"name":"x"},"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"m","params":{"name":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"name":"x"}} trailing"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"m","params":{"name":"x"}}]"#,
        ] {
            assert!(
                RawMessage::parse_request_with(declined.as_bytes(), seed).is_none(),
                "{declined}"
            );
        }
    }
}
