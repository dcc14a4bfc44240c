//! A small map from a type to one value of it: how wings keep their own settings on a
//! tool or a builder, and their state on the server, without the core naming them.

#![cfg_attr(
    not(all(feature = "legacy", feature = "tasks", feature = "http")),
    allow(
        dead_code,
        reason = "parts of the seam only the wings compiled out use"
    )
)]

use crate::fast_map::FastMap;
use std::any::{Any, TypeId};
use std::sync::Arc;

/// At most one value per type, shared (cheap to clone).
#[derive(Clone, Default)]
pub(crate) struct TypeMap(FastMap<TypeId, Arc<dyn Any + Send + Sync>>);

impl std::fmt::Debug for TypeMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TypeMap")
            .field("len", &self.0.len())
            .finish()
    }
}

impl TypeMap {
    /// Sets the value of type `T` (replacing any).
    pub(crate) fn insert<T: Any + Send + Sync>(&mut self, value: T) {
        self.0.insert(TypeId::of::<T>(), Arc::new(value));
    }

    /// Sets the value of type `T`, already shared.
    pub(crate) fn insert_arc<T: Any + Send + Sync>(&mut self, value: Arc<T>) {
        self.0.insert(TypeId::of::<T>(), value);
    }

    /// The value of type `T`, if set.
    pub(crate) fn get<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.0.get(&TypeId::of::<T>())?.downcast_ref()
    }

    /// Changes the value of type `T`, starting from its default when unset.
    pub(crate) fn update<T: Any + Send + Sync + Clone + Default>(
        &mut self,
        f: impl FnOnce(&mut T),
    ) {
        let mut value = self.get::<T>().cloned().unwrap_or_default();
        f(&mut value);
        self.insert(value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_value_per_type() {
        let mut m = TypeMap::default();
        assert!(m.get::<u8>().is_none());
        m.insert(3u8);
        m.update::<u8>(|v| *v += 1);
        m.update::<String>(|s| s.push('x'));
        assert_eq!(m.get::<u8>(), Some(&4));
        assert_eq!(m.get::<String>().map(String::as_str), Some("x"));
    }
}
