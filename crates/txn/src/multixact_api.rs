//! The engine's multixact calls: what storage uses to create a multixact,
//! read its members, and truncate the log (the log itself, its word
//! formats and the row-lock modes are in `multixact.rs`).

use crate::engine::Engine;
use crate::error::TxnError;
use crate::multixact::{Member, MultiTruncated, MultiXactId};
use crate::sync::atomic::Ordering::*;
use crate::xid::Xid;

impl Engine {
    /// Creates a multixact of `members` (at most one an updater). Fails
    /// with 54000 when the log's ring cannot take it: the oldest multi
    /// still referenced is too far back (the SQL layer then freezes and
    /// retries, as for the status log).
    pub fn create_multi(&self, members: &[Member]) -> Result<MultiXactId, TxnError> {
        debug_assert!(members.iter().filter(|m| m.status.is_update()).count() <= 1);
        self.multis.create(members)
    }

    /// The members of `multi`, read lock-free.
    pub fn try_multi_members(&self, multi: MultiXactId) -> Result<Vec<Member>, MultiTruncated> {
        let mut out = Vec::new();
        self.multis.members_with(multi, |m| {
            out.push(m);
            true
        })?;
        Ok(out)
    }

    /// The updater (or deleter) member of `multi`, if it has one: all a
    /// reader needs (no allocation).
    pub fn try_multi_updater(&self, multi: MultiXactId) -> Result<Option<Member>, MultiTruncated> {
        let mut found = None;
        self.multis.members_with(multi, |m| {
            if m.status.is_update() {
                found = Some(m);
            }
            found.is_none()
        })?;
        Ok(found)
    }

    /// The id the next multi will get: every multi created so far is
    /// below it.
    pub fn next_multi(&self) -> MultiXactId {
        // Acquire: pairs with the Release store in `create`.
        MultiXactId(self.multis.next_published.load(Acquire))
    }

    /// The oldest multi a row version may still reference (PostgreSQL's
    /// datminmxid).
    pub fn oldest_multi(&self) -> MultiXactId {
        self.multis.oldest_multi()
    }

    /// Raises the oldest multi to `multi`: the caller promises that no row
    /// version references an older one any more, because every vacuum pass
    /// that raised a table's oldest multi past it replaced those references
    /// first (MULTI-TRUNCATE). The log is then truncated to it. Returns the
    /// oldest multi now.
    pub fn advance_oldest_multi(&self, multi: MultiXactId) -> MultiXactId {
        let multi = multi.min(self.next_multi());
        // Release (MULTI-TRUNCATE): pairs with the Acquire load in
        // `oldest_multi`; whoever truncates by the new value comes after
        // the vacuum passes the caller observed.
        let before = self.multis.oldest.fetch_max(multi.0, Release);
        let now = before.max(multi.0);
        let _generator = self.multis.next.lock();
        self.multis.map.truncate(Xid(now));
        MultiXactId(now)
    }

    /// The multixact log: (positions in use: next − truncation point, the
    /// ring's capacity in positions, resident pages, bytes per page).
    pub fn multi_log_state(&self) -> MultiLogState {
        let map = &self.multis.map;
        MultiLogState {
            next: self.next_multi(),
            oldest: self.oldest_multi(),
            span: self.next_multi().0.saturating_sub(map.oldest().0),
            capacity: map.capacity_xids(),
            resident_pages: map.resident_pages(),
            page_bytes: map.page_bytes(),
        }
    }
}

/// The multixact log's size (a diagnostic; tests check it stays bounded).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MultiLogState {
    /// The next multi's id.
    pub next: MultiXactId,
    /// The oldest multi a row version may reference.
    pub oldest: MultiXactId,
    /// Positions between the truncation point and the next multi.
    pub span: u64,
    /// Positions the ring holds at once.
    pub capacity: u64,
    /// Pages allocated (never freed; reused below the truncation point).
    pub resident_pages: u64,
    /// Bytes per page.
    pub page_bytes: usize,
}

impl MultiLogState {
    /// Bytes the log holds.
    pub fn resident_bytes(&self) -> u64 {
        self.resident_pages * self.page_bytes as u64
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::multixact::{MemberStatus, RowLockMode};
    use crate::{EngineConfig, SnapshotMode};
    use RowLockMode::*;

    #[test]
    fn the_conflict_table_is_postgresqls() {
        let modes = [KeyShare, Share, NoKeyUpdate, Update];
        let expected = [
            [false, false, false, true],
            [false, false, true, true],
            [false, true, true, true],
            [true, true, true, true],
        ];
        for (i, a) in modes.iter().enumerate() {
            for (j, b) in modes.iter().enumerate() {
                assert_eq!(a.conflicts_with(*b), expected[i][j], "{a:?} vs {b:?}");
            }
            assert_eq!(RowLockMode::from_code(a.code()), *a);
        }
    }

    #[test]
    fn multis_round_trip_fill_the_ring_and_truncate() {
        let e = Engine::new(EngineConfig {
            snapshot_mode: SnapshotMode::Dense,
            multixact_log_pages: 4,
            log_page_bytes: 64,
            ..EngineConfig::default()
        });
        let m = |x: u64, s: MemberStatus| Member { xid: Xid(x), status: s };
        let a = e.create_multi(&[m(7, MemberStatus::Lock(Share)), m(9, MemberStatus::NoKeyUpdate)]).unwrap();
        assert_eq!(a, MultiXactId(1));
        assert_eq!(
            e.try_multi_members(a).unwrap(),
            vec![m(7, MemberStatus::Lock(Share)), m(9, MemberStatus::NoKeyUpdate)]
        );
        assert_eq!(e.try_multi_updater(a).unwrap(), Some(m(9, MemberStatus::NoKeyUpdate)));
        // 4 pages of 8 positions: 32 positions; multis of 3 words each.
        let mut last = a;
        let mut created = 1;
        while let Ok(next) =
            e.create_multi(&[m(11, MemberStatus::Lock(KeyShare)), m(12, MemberStatus::Update)])
        {
            last = next;
            created += 1;
        }
        assert_eq!(created, 10, "the ring is full: nothing was truncated");
        assert!(e.create_multi(&[m(1, MemberStatus::Update)]).is_err());
        // Nothing references anything older than `last` any more.
        e.advance_oldest_multi(last);
        for _ in 0..100 {
            last = e
                .create_multi(&[m(13, MemberStatus::Lock(Share)), m(14, MemberStatus::Lock(Share))])
                .unwrap();
            e.advance_oldest_multi(last);
        }
        assert_eq!(e.try_multi_members(a), Err(MultiTruncated(a)));
        assert_eq!(e.try_multi_updater(last).unwrap(), None);
        let state = e.multi_log_state();
        assert!(state.resident_pages <= 4 && state.span <= 3, "{state:?}");
    }
}
