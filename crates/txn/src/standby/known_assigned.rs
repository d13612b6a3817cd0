//! `known-assigned` mode: replay's side of KnownAssignedXids (the array
//! itself is `procarray/known_assigned.rs`, under the proc-array lock).
//!
//! * Appends (new xids, in increasing order) hold the lock shared
//!   (KA-APPEND): they only add xids above `latest_completed`, which no
//!   concurrent reader's decision depends on.
//! * Removals (commit, abort, vanished xids, overflowed subxids) hold it
//!   exclusive, together with the `latest_completed` raise and completion
//!   count bump of a completion (KA-CONSISTENCY, SNAPSHOT-CONSISTENCY), so
//!   no snapshot, in-progress check or horizon sees the running set change
//!   under it.

use super::Replayer;
use crate::procarray::ProcArray;
use crate::xid::Xid;

const KA: &str = "a known-assigned engine has KnownAssignedXids";

impl Replayer {
    /// Appends `[from, to]` except `skip` (an overflowed tree's subxid, whose
    /// `last_overflowed` is raised instead, in the same shared hold and
    /// before the head is published), making room first if needed.
    pub(super) fn ka_append(&self, from: Xid, to: Xid, skip: Option<Xid>) {
        if from > to {
            return;
        }
        let n = (to.0 - from.0 + 1) as usize - usize::from(skip.is_some_and(|s| from <= s && s <= to));
        let pa = &self.engine.procarray;
        loop {
            {
                let members = pa.lock.read();
                let ka = members.ka.as_ref().expect(KA);
                if ka.room() >= n {
                    if let Some(sub) = skip {
                        ka.raise_last_overflowed(sub);
                    }
                    ka.append((from.0..=to.0).map(Xid).filter(|&x| Some(x) != skip));
                    return;
                }
            }
            pa.lock.write().ka.as_mut().expect(KA).make_room(n);
        }
    }

    /// A completion: removes `xids` (valid entries or overflowed subxids),
    /// raises `latest_completed` to the newest of them and bumps the
    /// completion count, in one exclusive section (KA-CONSISTENCY). The
    /// status log already says how they ended (VISIBILITY-ORDER).
    pub(super) fn ka_complete(&self, xids: &[Xid]) {
        let Some(&latest) = xids.iter().max() else { return };
        let mut members = self.engine.procarray.lock.write();
        let ka = members.ka.as_mut().expect(KA);
        for &x in xids {
            ka.remove(x);
        }
        ka.after_removals();
        ProcArray::complete(&mut members, latest);
    }

    /// A tree overflowed: its subxids `subs` leave the array, and
    /// `last_overflowed` rises past them in the same exclusive section, so a
    /// snapshot either lists them or is suboverflowed and finds them through
    /// their parent links (set before, SUBTRANS-PARENT). Not a completion:
    /// they still run.
    pub(super) fn ka_overflow(&self, subs: &[Xid]) {
        let Some(&newest) = subs.iter().max() else { return };
        let mut members = self.engine.procarray.lock.write();
        let ka = members.ka.as_mut().expect(KA);
        ka.raise_last_overflowed(newest);
        for &s in subs {
            ka.remove(s);
        }
        ka.after_removals();
    }

    /// The valid entries below `bound`.
    pub(super) fn ka_valid_below(&self, bound: Xid) -> Vec<Xid> {
        let members = self.engine.procarray.lock.read();
        let mut out = Vec::new();
        members.ka.as_ref().expect(KA).copy_below(bound, &mut out);
        out
    }
}
