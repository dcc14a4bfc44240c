//! Frontmatter parsing: core-schema typing, and the hostile documents (YAML bombs, deep
//! nesting, duplicate and non-string keys, foreign tags) each refused with its own error.

use super::*;
use serde_json::json;

fn fm(yaml: &str) -> Result<JsonObject, FrontmatterError> {
    parse_yaml(yaml, &Limits::default())
}

#[test]
fn core_schema_typing() {
    let m = fm("name: a\nn: 1\nf: 1.5\nh: 0x1f\no: 0o17\nb: true\nz: ~\nyes_: yes\non_: on\nd: 2024-01-01\nq: '1'\nl: [1, two]\nm: {k: v}\ne: 1e3\n").unwrap();
    assert_eq!(
        Value::Object(m),
        json!({"name": "a", "n": 1, "f": 1.5, "h": 31, "o": 15, "b": true, "z": null, "yes_": "yes",
               "on_": "on", "d": "2024-01-01", "q": "1", "l": [1, "two"], "m": {"k": "v"}, "e": 1000.0})
    );
}

#[test]
fn split_accepts_bom_and_crlf() {
    let text = "\u{feff}---\r\nname: a\r\ndescription: b\r\n---\r\nbody\r\n";
    let s = split(text, &Limits::default()).unwrap();
    assert_eq!(s.body, "body\r\n");
    let m = parse(text, &Limits::default()).unwrap();
    assert_eq!(m["description"], "b");
    assert_eq!(
        split("no fence\n", &Limits::default()),
        Err(FrontmatterError::Missing)
    );
    assert_eq!(
        split("---\nname: a\n", &Limits::default()),
        Err(FrontmatterError::Unterminated)
    );
}

#[test]
fn aliases_expand_within_the_budget() {
    let m = fm("base: &b {x: 1}\ncopy: *b\n").unwrap();
    assert_eq!(m["copy"], json!({"x": 1}));
}

#[test]
fn a_yaml_bomb_stops_at_the_budget() {
    // Nine levels of ten aliases each: 10^9 nodes if expanded.
    let mut y = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..10 {
        let p = i - 1;
        y.push_str(&format!(
            "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
        ));
    }
    assert_eq!(
        fm(&y),
        Err(FrontmatterError::TooLarge {
            what: "values",
            max: 10_000
        })
    );
    // Few nodes, but a long string copied many times.
    let long = "x".repeat(60_000);
    let y = format!(
        "s: &s {long}\nl: [*s, *s, *s, *s, *s, *s, *s, *s, *s, *s, *s, *s, *s, *s, *s, *s, *s, *s]\n"
    );
    assert_eq!(
        fm(&y),
        Err(FrontmatterError::TooLarge {
            what: "bytes",
            max: 1024 * 1024
        })
    );
}

#[test]
fn deep_nesting_is_refused() {
    let y = format!("k: {}1{}\n", "[".repeat(200), "]".repeat(200));
    assert_eq!(fm(&y), Err(FrontmatterError::TooDeep { max: 32 }));
    let mut block = String::new();
    for i in 0..40 {
        block.push_str(&format!("{}k{i}:\n", "  ".repeat(i)));
    }
    block.push_str(&format!("{}v: 1\n", "  ".repeat(40)));
    assert_eq!(fm(&block), Err(FrontmatterError::TooDeep { max: 32 }));
    // An alias cannot smuggle depth in either.
    let mut y = String::from("a: &a ");
    y.push_str(&"[".repeat(20));
    y.push_str(&"]".repeat(20));
    y.push_str(&format!("\nb: {}*a{}\n", "[".repeat(20), "]".repeat(20)));
    assert_eq!(fm(&y), Err(FrontmatterError::TooDeep { max: 32 }));
}

#[test]
fn hostile_shapes_are_refused() {
    assert_eq!(
        fm("a: 1\na: 2\n"),
        Err(FrontmatterError::DuplicateKey("a".into()))
    );
    assert!(matches!(
        fm("1: a\n"),
        Err(FrontmatterError::NonStringKey(_))
    ));
    assert!(matches!(
        fm("[a]: b\n"),
        Err(FrontmatterError::NonStringKey(_))
    ));
    assert!(matches!(
        fm("a: !custom x\n"),
        Err(FrontmatterError::UnsupportedTag(_))
    ));
    assert!(matches!(
        fm("a: !!binary aGk=\n"),
        Err(FrontmatterError::UnsupportedTag(_))
    ));
    assert_eq!(fm("a: !!str 12\n").unwrap()["a"], "12");
    assert!(matches!(fm("a: .nan\n"), Err(FrontmatterError::NotJson(_))));
    assert!(matches!(
        fm("a: -.inf\n"),
        Err(FrontmatterError::NotJson(_))
    ));
    assert_eq!(fm("- a\n"), Err(FrontmatterError::NotAMapping));
    assert!(matches!(
        fm("a: *nope\n"),
        Err(FrontmatterError::Syntax { .. } | FrontmatterError::UnknownAlias)
    ));
    assert!(matches!(fm("a: [\n"), Err(FrontmatterError::Syntax { .. })));
    let big = format!("a: {}\n", "x".repeat(70_000));
    assert_eq!(fm(&big), Err(FrontmatterError::TooLong { max: 64 * 1024 }));
}

#[test]
fn differences_by_field() {
    let a = json!({"name": "x", "description": "d", "v": 1, "m": {"k": [1.0]}});
    let b = json!({"name": "x", "description": "e", "v": 1.0, "m": {"k": [1]}, "extra": null});
    let (Value::Object(a), Value::Object(b)) = (a, b) else {
        unreachable!()
    };
    assert_eq!(differences(&a, &b), vec!["description".to_owned()]);
}
