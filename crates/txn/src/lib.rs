//! snapscale's transaction core: transaction ids, the commit-status log,
//! subtransaction parents, the proc array, snapshots in every strategy,
//! visibility decisions and horizons. No I/O.
//!
//! Start at [`Engine`] and [`Session`]; the invariants and interlocks are
//! stated in this crate's README.md, and code comments cite them by tag
//! (XID-PUBLISH, SNAPSHOT-CONSISTENCY, …).

mod clog;
mod csn;
mod engine;
mod error;
mod horizon;
mod multixact;
mod multixact_api;
mod procarray;
mod session;
mod snapshot;
mod standby;
mod subtrans;
mod sync;
mod visibility;
mod xid;
mod xidmap;

#[cfg(all(test, loom))]
mod loom_tests;

pub use clog::{StatusTruncated, XidStatus};
pub use csn::{Csn, FIRST_CSN};
pub use engine::{Engine, EngineConfig, LogPages, OldestSnapshot, SnapshotMode};
pub use error::{HeldBy, TxnError, XidLog};
pub use horizon::{GlobalVis, Horizons};
pub use multixact::{Member, MemberStatus, MultiTruncated, MultiXactId, RowLockMode, MAX_XID as MAX_ROW_XID};
pub use multixact_api::MultiLogState;
pub use procarray::{FLAG_IN_VACUUM, SUBXID_CACHE};
pub use session::{IsolationLevel, Session, SessionCounters, SnapshotId};
pub use snapshot::Snapshot;
pub use standby::{Replayer, RunningXacts};
pub use visibility::{Hints, Reader, TupleXids, XidState};
pub use xid::{CommandId, VirtualXid, Xid};
