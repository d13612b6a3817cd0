//! Crash recovery of a primary: the latest checkpoint image, then the
//! committed transactions the WAL holds after it.
//!
//! The WAL holds every transaction's changes as they happened, tagged by
//! xid, interleaved with other transactions' records (WAL-TAGGED). A
//! checkpoint names two positions: its redo point, where the oldest
//! transaction still running at the checkpoint's cut wrote its first
//! record (TREE-START), and the cut itself, where its snapshot was taken
//! (CHECKPOINT-CUT). Transactions whose COMMIT record lies before the cut
//! are in the image; those committing at or after it are not, and every
//! record of theirs lies at or after the redo point.
//!
//! So recovery reads the WAL from the redo point twice, one segment at a
//! time: the first pass collects the xids (top-level and subtransaction)
//! of COMMIT records at or after the cut; the second applies, in log
//! order, the changes tagged with those xids. Log order is a valid order:
//! two transactions change one row only one after the other, and the
//! second one's records follow the first one's COMMIT (or ABORT).
//! Memory holds the image and the set of committed xids, never the log.

use std::collections::HashSet;
use std::path::Path;

use snapscale_storage::log::{Lsn, Scan};
use snapscale_txn::Xid;

use crate::redo::{self, CheckpointHeader, Image, Record};

/// What replaying the WAL after a checkpoint found.
pub struct Replayed {
    /// Where the valid log ends (appending resumes here).
    pub end: Lsn,
    /// The next xid to hand out: after every xid the image or the log names.
    pub next_xid: Xid,
    /// COMMIT records applied.
    pub committed: u64,
    /// Bytes read from the redo point.
    pub bytes: u64,
    /// Why the log ended where it did, if not at the end of its files.
    pub stopped: Option<String>,
}

fn scan_error(e: std::io::Error) -> String {
    format!("could not read the WAL: {e}")
}

/// Applies to `image` every transaction that committed at or after the
/// checkpoint's cut (see the module docs). Refuses damage before the last
/// segment: committed WAL after it would be lost.
pub fn replay(
    wal_dir: &Path,
    redo: Lsn,
    header: &CheckpointHeader,
    image: &mut Image,
) -> Result<Replayed, String> {
    // Pass 1: which xids committed after the cut, and the newest xid named.
    let mut committed: HashSet<Xid> = HashSet::new();
    let mut commits = 0u64;
    let mut newest = Xid(header.next_xid.0.saturating_sub(1));
    let mut sequences = false;
    let mut scan = Scan::new(wal_dir, redo).map_err(scan_error)?;
    while let Some(r) = scan.next_record().map_err(scan_error)? {
        let Some(record) = redo::decode(r.kind, &r.payload).map_err(|e| format!("LSN {:X}: {e}", r.lsn))?
        else {
            continue;
        };
        newest = newest.max(record.max_xid());
        sequences |= matches!(record, Record::Sequence { .. });
        if let Record::Commit { xid, subxids, .. } = &record {
            if r.lsn >= header.cut {
                committed.insert(*xid);
                committed.extend(subxids.iter().copied());
                commits += 1;
            }
        }
    }
    if let (Some(why), false) = (scan.stopped(), scan.torn_tail()) {
        return Err(format!("the WAL is damaged before its end ({why}); refusing to start"));
    }
    let end = scan.end();
    let stopped = scan.stopped().map(str::to_owned);
    // Pass 2: their changes, in log order, up to the same end; and the
    // sequences' values logged after the cut (the image holds those logged
    // before it, or later ones: SEQ-ORDER), whoever logged them.
    if !committed.is_empty() || sequences {
        let mut scan = Scan::new(wal_dir, redo).map_err(scan_error)?;
        while let Some(r) = scan.next_record().map_err(scan_error)? {
            if r.lsn >= end {
                break;
            }
            match redo::decode(r.kind, &r.payload).map_err(|e| format!("LSN {:X}: {e}", r.lsn))? {
                Some(Record::Change { xid, change }) if committed.contains(&xid) => {
                    image.apply(&change).map_err(|e| format!("replaying LSN {:X}: {e}", r.lsn))?;
                }
                Some(Record::Sequence { storage, value }) if r.lsn >= header.cut => {
                    image.sequences.insert(storage, value);
                }
                _ => {}
            }
        }
    }
    Ok(Replayed {
        end,
        next_xid: newest.next().max(Xid::FIRST_NORMAL),
        committed: commits,
        bytes: end.saturating_sub(redo),
        stopped,
    })
}
