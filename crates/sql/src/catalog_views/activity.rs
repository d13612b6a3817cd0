//! `pg_stat_activity` (each client backend: who, since when, doing what,
//! waiting for what, with which xid and xmin) and `pg_locks` (every lock
//! held or awaited, from the lock manager). Both are diagnostic views, read
//! a session or a lock partition at a time, not at one instant.

use snapscale_engine::{LockMode, LockTag};
use snapscale_values::Value;

use super::defs::{PG_LOCKS, PG_STAT_ACTIVITY, PG_STAT_SSL};
use super::{CatalogState, RowBuilder};

/// The database oid pg_database shows for a name.
fn database_oid(name: &str) -> u32 {
    match name {
        "template1" => 1,
        "template0" => 4,
        "postgres" => 5,
        _ => 16383,
    }
}

fn mode_name(m: LockMode) -> &'static str {
    match m {
        LockMode::AccessShare => "AccessShareLock",
        LockMode::RowShare => "RowShareLock",
        LockMode::RowExclusive => "RowExclusiveLock",
        LockMode::ShareUpdateExclusive => "ShareUpdateExclusiveLock",
        LockMode::Share => "ShareLock",
        LockMode::ShareRowExclusive => "ShareRowExclusiveLock",
        LockMode::Exclusive => "ExclusiveLock",
        LockMode::AccessExclusive => "AccessExclusiveLock",
    }
}

fn lock_type(tag: &LockTag) -> &'static str {
    match tag {
        LockTag::Relation(_) => "relation",
        LockTag::Transaction(_) => "transactionid",
        LockTag::VirtualTransaction { .. } => "virtualxid",
        LockTag::Advisory { .. } => "advisory",
        LockTag::Tuple { .. } => "tuple",
    }
}

/// `pg_stat_ssl`: one row per client backend, its TLS if it has any.
pub(super) fn stat_ssl(state: &CatalogState) -> Vec<Vec<Value>> {
    let text = |t: &Option<String>| t.clone().map_or(Value::Null, Value::Text);
    state
        .db
        .activity
        .all()
        .into_iter()
        .map(|(slot, s)| {
            let row = RowBuilder::new(PG_STAT_SSL).set("pid", slot as i64 + 1).set("ssl", s.ssl.is_some());
            match &s.ssl {
                None => row,
                Some(t) => row
                    .set("version", t.version.as_str())
                    .set("cipher", t.cipher.as_str())
                    .set("bits", Value::Int(t.bits.into()))
                    .set("client_dn", text(&t.client_dn))
                    .set(
                        "client_serial",
                        t.client_serial
                            .as_deref()
                            .and_then(|n| snapscale_values::numeric::Numeric::parse(n).ok())
                            .map_or(Value::Null, Value::Numeric),
                    )
                    .set("issuer_dn", text(&t.issuer_dn)),
            }
            .build()
        })
        .collect()
}

pub(super) fn stat_activity(state: &CatalogState) -> Vec<Vec<Value>> {
    let waiting = state.db.locks.waiting();
    state
        .db
        .activity
        .all()
        .into_iter()
        .map(|(slot, s)| {
            let (xid, xmin) = state.db.engine.backend_xids(slot);
            // In csn mode the proc array does not carry the xid; every xid
            // a session assigns is registered with the lock manager
            // (XID-WAITABLE), and its top-level one is the oldest.
            let xid = xid.map(|x| x.0).or_else(|| {
                state
                    .db
                    .locks
                    .held_locks(slot)
                    .iter()
                    .filter_map(|h| match h.tag {
                        LockTag::Transaction(x) => Some(x),
                        _ => None,
                    })
                    .min()
            });
            let wait = waiting.iter().find(|(w, _, _)| *w == slot).map(|(_, tag, _)| lock_type(tag));
            let opt_ts = |t: Option<i64>| t.map_or(Value::Null, Value::TimestampTz);
            RowBuilder::new(PG_STAT_ACTIVITY)
                .set("datid", database_oid(&s.database))
                .set("datname", s.database.as_str())
                .set("pid", slot as i64 + 1)
                .set("usesysid", state.role_of(&s.user))
                .set("usename", s.user.as_str())
                .set("application_name", s.application_name.as_str())
                .set("client_addr", s.client_addr.clone().map_or(Value::Null, Value::Text))
                .set("client_port", s.client_port.map_or(Value::Null, |p| Value::Int(p.into())))
                .set("backend_start", Value::TimestampTz(s.backend_start))
                .set("xact_start", opt_ts(s.xact_start))
                .set("query_start", opt_ts(s.query_start))
                .set("state_change", Value::TimestampTz(s.state_change))
                .set("wait_event_type", wait.map_or(Value::Null, |_| Value::from("Lock")))
                .set("wait_event", wait.map_or(Value::Null, Value::from))
                .set("state", s.state.name())
                .set("backend_xid", xid.map_or(Value::Null, |x| Value::Int(x as i64)))
                .set("backend_xmin", xmin.map_or(Value::Null, |x| Value::Int(x.0 as i64)))
                .set("query", s.query.to_string())
                .set("backend_type", "client backend")
                .build()
        })
        .collect()
}

pub(super) fn locks(state: &CatalogState) -> Vec<Vec<Value>> {
    let locks = &state.db.locks;
    let sessions = locks.config().max_sessions;
    let mut out = Vec::new();
    let row = |slot: u32, tag: &LockTag, mode: LockMode, granted: bool, fast_path: bool, vxid: &str| {
        let mut b = RowBuilder::new(PG_LOCKS)
            .set("locktype", lock_type(tag))
            .set("virtualtransaction", vxid.to_owned())
            .set("pid", slot as i64 + 1)
            .set("mode", mode_name(mode))
            .set("granted", granted)
            .set("fastpath", fast_path);
        b = match *tag {
            LockTag::Relation(oid) => b.set("database", database_oid(&state.database)).set("relation", oid),
            LockTag::Transaction(xid) => b.set("transactionid", xid as i64),
            LockTag::VirtualTransaction { slot, local } => {
                b.set("virtualxid", format!("{}/{local}", slot + 1))
            }
            // What PostgreSQL fills for a user lock: the database, and the
            // key's two halves with the kind of key in objsubid.
            LockTag::Advisory { classid, objid, objsubid } => b
                .set("database", database_oid(&state.database))
                .set("classid", classid)
                .set("objid", objid)
                .set("objsubid", i64::from(objsubid)),
            // A tid is not a (block, offset) pair here: its high bits are
            // shown as the page and its low 15 (a smallint) as the tuple.
            LockTag::Tuple { relation, tid } => b
                .set("database", database_oid(&state.database))
                .set("relation", relation)
                .set("page", (tid >> 15) as i64)
                .set("tuple", (tid & 0x7fff) as i64),
        };
        b.build()
    };
    // The session's virtual transaction names its locks, held and awaited.
    let vxid = |slot: u32, held: &[snapscale_engine::HeldLock]| {
        held.iter()
            .find_map(|h| match h.tag {
                LockTag::VirtualTransaction { slot, local } => Some(format!("{}/{local}", slot + 1)),
                _ => None,
            })
            .unwrap_or_else(|| format!("{}/0", slot + 1))
    };
    for slot in 0..sessions {
        let held = locks.held_locks(slot);
        let v = vxid(slot, &held);
        for h in &held {
            out.push(row(slot, &h.tag, h.mode, true, h.fast_path, &v));
        }
    }
    for (slot, tag, mode) in locks.waiting() {
        let v = vxid(slot, &locks.held_locks(slot));
        out.push(row(slot, &tag, mode, false, false, &v));
    }
    out
}

/// Whether backend `pid` waits in the lock manager for a lock that one of
/// `pids` holds in a conflicting mode or waits for ahead of it (PostgreSQL's
/// pg_isolation_test_session_is_blocked, over its pg_blocking_pids).
pub(super) fn blocked_by(state: &CatalogState, pid: i64, pids: &[i64]) -> bool {
    let locks = &state.db.locks;
    let waiting = locks.waiting();
    let slot_of = |p: i64| u32::try_from(p - 1).ok();
    let Some(me) = slot_of(pid) else { return false };
    let Some((_, tag, mode)) = waiting.iter().find(|(s, _, _)| *s == me) else { return false };
    pids.iter().filter_map(|&p| slot_of(p)).filter(|&s| s != me).any(|s| {
        let holds = locks.held_locks(s).iter().any(|h| h.tag == *tag && h.mode.conflicts_with(*mode));
        let queued = waiting.iter().any(|(w, t, m)| *w == s && t == tag && m.conflicts_with(*mode));
        holds || queued
    })
}
