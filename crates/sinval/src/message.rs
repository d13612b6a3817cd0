//! Invalidation messages: which catalog object changed.

/// What another session must drop from its catalog cache.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Invalidation {
    /// A relation's catalog entry (table definition, columns).
    Relation(u32),
    /// An index's catalog entry.
    Index(u32),
    /// Everything: the receiver rebuilds its whole catalog cache.
    All,
}

const KIND_SHIFT: u32 = 32;

impl Invalidation {
    /// One 64-bit word, so a ring slot is a single atomic (no torn reads).
    pub(crate) fn encode(self) -> u64 {
        match self {
            Invalidation::Relation(oid) => (1 << KIND_SHIFT) | oid as u64,
            Invalidation::Index(oid) => (2 << KIND_SHIFT) | oid as u64,
            Invalidation::All => 3 << KIND_SHIFT,
        }
    }

    pub(crate) fn decode(word: u64) -> Invalidation {
        let oid = word as u32;
        match word >> KIND_SHIFT {
            1 => Invalidation::Relation(oid),
            2 => Invalidation::Index(oid),
            3 => Invalidation::All,
            kind => panic!("SINVAL-SLOT violated: ring slot holds unknown message kind {kind}"),
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        for m in [
            Invalidation::Relation(0),
            Invalidation::Relation(u32::MAX),
            Invalidation::Index(7),
            Invalidation::All,
        ] {
            assert_eq!(Invalidation::decode(m.encode()), m);
        }
    }
}
