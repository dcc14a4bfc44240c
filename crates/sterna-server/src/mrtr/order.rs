//! The order a form's fields were declared in.
//!
//! `schemars` hands properties over in a `serde_json::Map`, which sorts its keys unless
//! serde_json's `preserve_order` feature is on — a feature that would change `Map` to an
//! `IndexMap` for the whole dependency graph, hot path included. serde knows the
//! declaration order without any feature: a derived `Deserialize` passes its field names
//! (renames applied) to `Deserializer::deserialize_struct`. [`declared_order`] asks once,
//! with a deserializer that only records them.

use serde::de::{self, DeserializeOwned, Deserializer, Visitor};
use std::cell::Cell;
use sterna_types::elicitation::PrimitiveSchema;

type Fields = &'static [&'static str];

/// A deserializer that records the field list a struct asks for, then fails.
struct FieldProbe<'a>(&'a Cell<Option<Fields>>);

impl<'de> Deserializer<'de> for FieldProbe<'_> {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("not a struct"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: Fields,
        _: V,
    ) -> Result<V::Value, Self::Error> {
        self.0.set(Some(fields));
        Err(de::Error::custom("field names recorded"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
        byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
        identifier ignored_any
    }
}

/// `T`'s field names in declaration order, as they appear on the wire; `None` when `T`
/// does not deserialize as a plain struct (flattened fields, hand-written impls).
pub(crate) fn declared_order<T: DeserializeOwned>() -> Option<Fields> {
    let seen = Cell::new(None);
    let _ = T::deserialize(FieldProbe(&seen));
    seen.get()
}

/// Sorts `properties` by their position in `order`; names not in it keep their relative
/// order, after the others.
pub(crate) fn sort_properties(properties: &mut [(String, PrimitiveSchema)], order: Fields) {
    properties.sort_by_key(|(name, _)| order.iter().position(|f| f == name).unwrap_or(usize::MAX));
}

#[cfg(test)]
mod tests {
    use super::super::form::form_schema;
    use super::declared_order;
    use schemars::JsonSchema;
    use serde::Deserialize;

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct SignUp {
        name: String,
        email: String,
        age: u8,
    }

    #[derive(Deserialize, JsonSchema)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)]
    struct Renamed {
        zip_code: String,
        #[serde(rename = "aFirst")]
        a_first: Option<bool>,
    }

    #[test]
    fn a_form_keeps_its_declaration_order_on_the_wire() {
        let spec = form_schema::<SignUp>().unwrap();
        let json = serde_json::to_string(&spec.schema).unwrap();
        let (n, e, a) = (
            json.find("\"name\"").unwrap(),
            json.find("\"email\"").unwrap(),
            json.find("\"age\"").unwrap(),
        );
        assert!(n < e && e < a, "properties out of order: {json}");
        let names: Vec<&str> = spec
            .schema
            .properties
            .iter()
            .map(|(k, _)| k.as_str())
            .collect();
        assert_eq!(names, ["name", "email", "age"]);
    }

    #[test]
    fn renamed_fields_keep_their_order() {
        assert_eq!(
            declared_order::<Renamed>(),
            Some(&["zipCode", "aFirst"][..])
        );
        let spec = form_schema::<Renamed>().unwrap();
        let names: Vec<&str> = spec
            .schema
            .properties
            .iter()
            .map(|(k, _)| k.as_str())
            .collect();
        assert_eq!(names, ["zipCode", "aFirst"]);
    }

    #[test]
    fn non_structs_have_no_order() {
        assert_eq!(declared_order::<String>(), None);
        assert_eq!(
            declared_order::<std::collections::HashMap<String, u8>>(),
            None
        );
    }
}
