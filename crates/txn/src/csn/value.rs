//! What one CSN-log word says about an xid.
//!
//! ```text
//!   0                      IN_PROGRESS   running (or never finished)
//!   1                      ABORTED
//!   2                      FROZEN        committed before every snapshot
//!   FIRST ..= 2^62 - 1     a commit sequence number
//!   2^62 | parent xid      SUBXACT       a running subtransaction: ask the parent
//!   2^63 | owner slot      COMMITTING    the top xid is between taking its CSN
//!                                        and stamping it: wait for the owner
//! ```

use crate::xid::Xid;

/// A commit sequence number: the position of a commit in visibility order.
pub type Csn = u64;

/// The first CSN handed out; smaller values are the special states.
pub const FIRST_CSN: Csn = 16;

const IN_PROGRESS: u64 = 0;
const ABORTED: u64 = 1;
const FROZEN: u64 = 2;
const SUBXACT_BIT: u64 = 1 << 62;
const COMMITTING_BIT: u64 = 1 << 63;

/// A decoded CSN-log word.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum CsnValue {
    InProgress,
    Aborted,
    /// Committed with this CSN (FROZEN decodes as the smallest one).
    Committed(Csn),
    /// A running subtransaction of this parent.
    Subxact(Xid),
    /// Its top-level transaction is committing, owned by this session slot.
    Committing(u32),
    /// Never stored: what `CsnState::resolve` answers for an xid below the
    /// log's truncation point whose page was recycled. The xid has finished
    /// (XIDMAP-FLOOR); the status log says whether it committed.
    Truncated,
}

impl CsnValue {
    pub(crate) fn decode(word: u64) -> CsnValue {
        if word & COMMITTING_BIT != 0 {
            CsnValue::Committing((word & !COMMITTING_BIT) as u32)
        } else if word & SUBXACT_BIT != 0 {
            CsnValue::Subxact(Xid(word & !SUBXACT_BIT))
        } else {
            match word {
                IN_PROGRESS => CsnValue::InProgress,
                ABORTED => CsnValue::Aborted,
                FROZEN => CsnValue::Committed(FROZEN),
                csn => CsnValue::Committed(csn),
            }
        }
    }

    pub(crate) fn encode(self) -> u64 {
        match self {
            CsnValue::InProgress => IN_PROGRESS,
            CsnValue::Aborted => ABORTED,
            CsnValue::Committed(csn) => {
                debug_assert!(csn < SUBXACT_BIT, "CSN space exhausted");
                csn
            }
            CsnValue::Subxact(parent) => SUBXACT_BIT | parent.0,
            CsnValue::Committing(slot) => COMMITTING_BIT | slot as u64,
            CsnValue::Truncated => unreachable!("a truncated entry is never stored"),
        }
    }

    /// True once the value can no longer change.
    pub(crate) fn is_final(self) -> bool {
        matches!(self, CsnValue::Aborted | CsnValue::Committed(_) | CsnValue::Truncated)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        for v in [
            CsnValue::InProgress,
            CsnValue::Aborted,
            CsnValue::Committed(FROZEN),
            CsnValue::Committed(FIRST_CSN + 12345),
            CsnValue::Subxact(Xid(77)),
            CsnValue::Committing(9),
        ] {
            assert_eq!(CsnValue::decode(v.encode()), v);
        }
        assert!(CsnValue::Committed(FIRST_CSN).is_final() && CsnValue::Aborted.is_final());
        assert!(!CsnValue::Subxact(Xid(3)).is_final() && !CsnValue::Committing(0).is_final());
    }
}
