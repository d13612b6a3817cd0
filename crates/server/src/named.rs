//! Prepared statements and portals by name. The unnamed one (the empty
//! name, which drivers use for one-shot statements and which each Parse or
//! Bind replaces) has a field of its own, so the commonest lookups of the
//! extended protocol hash nothing.

use std::collections::HashMap;

/// Values by name, the unnamed one apart.
pub(crate) struct Named<T> {
    unnamed: Option<T>,
    named: HashMap<String, T>,
}

impl<T> Named<T> {
    pub(crate) fn new() -> Named<T> {
        Named { unnamed: None, named: HashMap::new() }
    }

    pub(crate) fn get(&self, name: &str) -> Option<&T> {
        if name.is_empty() {
            self.unnamed.as_ref()
        } else {
            self.named.get(name)
        }
    }

    pub(crate) fn get_mut(&mut self, name: &str) -> Option<&mut T> {
        if name.is_empty() {
            self.unnamed.as_mut()
        } else {
            self.named.get_mut(name)
        }
    }

    pub(crate) fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Puts `value` under `name`, replacing what was there.
    pub(crate) fn insert(&mut self, name: String, value: T) {
        if name.is_empty() {
            self.unnamed = Some(value);
        } else {
            self.named.insert(name, value);
        }
    }

    pub(crate) fn remove(&mut self, name: &str) -> Option<T> {
        if name.is_empty() {
            self.unnamed.take()
        } else {
            self.named.remove(name)
        }
    }

    pub(crate) fn clear(&mut self) {
        self.unnamed = None;
        self.named.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::Named;

    #[test]
    fn the_unnamed_one_is_kept_apart_and_behaves_like_any_other() {
        let mut n = Named::new();
        assert!(!n.contains_key(""));
        n.insert(String::new(), 1);
        n.insert("a".into(), 2);
        assert_eq!((n.get(""), n.get("a"), n.get("b")), (Some(&1), Some(&2), None));
        n.insert(String::new(), 3);
        *n.get_mut("a").unwrap() += 10;
        assert_eq!((n.get(""), n.get("a")), (Some(&3), Some(&12)));
        assert_eq!(n.remove(""), Some(3));
        assert_eq!(n.remove(""), None);
        assert!(n.contains_key("a"));
        n.insert(String::new(), 4);
        n.clear();
        assert!(!n.contains_key("") && !n.contains_key("a"));
    }
}
