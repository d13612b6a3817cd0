//! Scalar functions: the session's and the server's state, text
//! functions, and the sequence functions (whose values are in
//! snapscale_engine::sequence).

use super::*;

/// PostgreSQL's text form of a snapshot: `xmin:xmax:xip,...`. A CSN
/// snapshot keeps no list, so the xids between its bounds are asked one by
/// one (refused past a million: this is a diagnostic, not a scan).
fn snapshot_text(
    db: &snapscale_engine::database::Database,
    snapshot: &snapscale_engine::Snapshot,
) -> Result<String, SqlError> {
    let (xmin, xmax) = (snapshot.xmin.0, snapshot.xmax.0);
    let running: Vec<u64> = if snapshot.csn() != 0 {
        if xmax - xmin > 1_000_000 {
            return Err(SqlError::new(
                SqlState::PROGRAM_LIMIT_EXCEEDED,
                format!("the snapshot spans {} xids, too many to list", xmax - xmin),
            ));
        }
        (xmin..xmax).filter(|&x| db.engine.xid_in_snapshot(snapscale_engine::Xid(x), snapshot)).collect()
    } else {
        let mut xids: Vec<u64> =
            snapshot.xip().iter().chain(snapshot.subxip()).map(|x| x.0).filter(|&x| x < xmax).collect();
        xids.sort_unstable();
        xids
    };
    let list: Vec<String> = running.iter().map(u64::to_string).collect();
    Ok(format!("{xmin}:{xmax}:{}", list.join(",")))
}

/// Calls `f`. A volatile call in a statement that keeps a journal goes
/// through it, so that a run after a wait replays it (EVAL-REPLAY).
pub(super) fn func(f: Func, args: Vec<Value>, cx: &Ctx<'_>) -> Result<Value, SqlError> {
    if let Func::PlRow(_) = f {
        // PL-ROW-CALLS: the journal's result, or a stop for the executor.
        let Some(replay) = cx.replay else {
            return Err(SqlError::new(SqlState::INTERNAL_ERROR, "a function call outside its statement"));
        };
        return replay.call(f, &args, || Err(replay.stop_for_call(f, args.clone())));
    }
    match cx.replay {
        Some(replay) if f.is_volatile() => replay.call(f, &args, || live(f, args.clone(), cx)),
        _ => live(f, args, cx),
    }
}

fn live(f: Func, args: Vec<Value>, cx: &Ctx<'_>) -> Result<Value, SqlError> {
    let lsn = |l: u64| Value::Text(snapscale_engine::format_lsn(l));
    let progress = cx.db.and_then(|db| db.replay_progress());
    Ok(match f {
        Func::PlRow(_) => unreachable!("PL-ROW-CALLS: handled by func"),
        Func::Now => Value::TimestampTz(cx.now),
        Func::ClockTimestamp => Value::TimestampTz(snapscale_values::now_micros()),
        Func::AtTimeZone => super::datetime::at_zone(&args[0], &args[1], cx.now)?,
        Func::DateTrunc => super::datetime::date_trunc(&args, cx.zone())?,
        Func::DatePart => super::datetime::date_part(&args, cx.zone())?,
        Func::InRecovery => Value::Bool(cx.db.is_some_and(|db| db.in_recovery())),
        Func::LastReceiveLsn => progress.map_or(Value::Null, |(received, _, _)| lsn(received)),
        Func::LastReplayLsn => progress.map_or(Value::Null, |(_, applied, _)| lsn(applied)),
        Func::LastReplayTimestamp => {
            progress.and_then(|(_, _, time)| time).map_or(Value::Null, Value::TimestampTz)
        }
        Func::CurrentWalLsn => match cx.db {
            Some(db) if db.in_recovery() => {
                return Err(SqlError::new(
                    SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
                    "recovery is in progress",
                )
                .with_hint("WAL control functions cannot be executed during recovery."))
            }
            Some(db) => lsn(db.wal_insert_lsn()),
            None => Value::Null,
        },
        Func::CurrentSnapshot => match (cx.db, cx.snapshot) {
            (Some(db), Some(snapshot)) => Value::Text(snapshot_text(db, snapshot)?),
            _ => Value::Null,
        },
        Func::Version => {
            let version = session(cx)?.map(|s| (s.show)("server_version")).transpose()?.unwrap_or_default();
            Value::Text(format!(
                "PostgreSQL {version} on {}-pc-linux-gnu, compiled by rustc, 64-bit",
                std::env::consts::ARCH
            ))
        }
        Func::CurrentUser => Value::Text(session(cx)?.map_or_else(|| "postgres".into(), |s| s.user.clone())),
        Func::CurrentDatabase => {
            Value::Text(session(cx)?.map_or_else(|| "postgres".into(), |s| s.database.clone()))
        }
        // The first schema of the search_path that exists (NULL if none).
        Func::CurrentSchema => match (session(cx)?, cx.catalog) {
            (Some(s), Some(catalog)) => s
                .search_path
                .iter()
                .find(|n| {
                    *n != "pg_temp"
                        && catalog.oid_of(Reg::Namespace, &snapscale_values::quote_ident(n)).is_some()
                })
                .map_or(Value::Null, |n| Value::Text(n.clone())),
            _ => Value::Text("public".into()),
        },
        Func::ReloadConf => {
            // The server's reload loop waits for it (crates/server).
            if let Some(db) = cx.db {
                db.reloads.notify_one();
            }
            Value::Bool(true)
        }
        Func::BackendPid => Value::Int(session(cx)?.map_or(0, |s| s.pid).into()),
        // Relaxed: pairs with the trigger call's fetch_add / fetch_sub
        // (pl_exec/trigger.rs `Depth`), made by this same session.
        Func::TriggerDepth => Value::Int(
            session(cx)?.map_or(0, |s| s.trigger_depth.load(std::sync::atomic::Ordering::Relaxed)).into(),
        ),
        Func::CurrentSetting => {
            let missing_ok = matches!(args.get(1), Some(Value::Bool(true)));
            match (&args[0], session(cx)?) {
                (Value::Null, _) => Value::Null,
                // The running transaction's, as SHOW gives it.
                (Value::Text(name), Some(s)) if name.eq_ignore_ascii_case("transaction_isolation") => {
                    // Relaxed: pairs with the store in Xact::begin, made by
                    // this same session.
                    match s.isolation.load(std::sync::atomic::Ordering::Relaxed) {
                        1 => Value::Text("read committed".into()),
                        2 => Value::Text("repeatable read".into()),
                        _ => Value::Text((s.show)("default_transaction_isolation")?),
                    }
                }
                (Value::Text(name), Some(s)) => match (s.show)(&name.to_ascii_lowercase()) {
                    Ok(v) => Value::Text(v),
                    Err(e) if missing_ok && e.code == SqlState::UNDEFINED_OBJECT => Value::Null,
                    Err(e) => return Err(e),
                },
                // Bound as text; no session attached (tests) knows nothing.
                _ => Value::Null,
            }
        }
        Func::SetConfig => {
            let name = match &args[0] {
                Value::Text(name) => name.to_ascii_lowercase(),
                _ => {
                    return Err(SqlError::new(
                        SqlState::NULL_VALUE_NOT_ALLOWED,
                        "SET requires parameter name",
                    ))
                }
            };
            let value = match &args[1] {
                Value::Text(v) => Some(v.as_str()),
                _ => None,
            };
            let local = matches!(args[2], Value::Bool(true));
            match session(cx)? {
                Some(s) => Value::Text((s.set)(&name, value, local)?),
                None => Value::Null,
            }
        }
        Func::Scalar(s) => s.apply(&args, cx.style())?,
        Func::QuoteLiteral => match &args[0] {
            Value::Null => Value::Null,
            v => {
                let text = v.try_text_in(cx.style())?.unwrap_or_default();
                let body = text.replace('\'', "''");
                // A backslash makes PostgreSQL write an escape string.
                if body.contains('\\') {
                    Value::Text(format!("E'{}'", body.replace('\\', "\\\\")))
                } else {
                    Value::Text(format!("'{body}'"))
                }
            }
        },
        Func::Coalesce | Func::Case => unreachable!("evaluated lazily by eval_func"),
        Func::NullIf => match (&args[0], &args[1]) {
            (Value::Null, _) => Value::Null,
            (a, Value::Null) => a.clone(),
            (a, b) if compare(a, b, false)?.is_eq() => Value::Null,
            (a, _) => a.clone(),
        },
        Func::Greatest | Func::Least => {
            let mut best: Option<Value> = None;
            for v in args {
                if matches!(v, Value::Null) {
                    continue;
                }
                best = Some(match best {
                    None => v,
                    Some(b) => {
                        let later = compare(&v, &b, false)?.is_gt();
                        if later == (f == Func::Greatest) {
                            v
                        } else {
                            b
                        }
                    }
                });
            }
            best.unwrap_or(Value::Null)
        }
        Func::Substring => substring(&args)?,
        Func::NextVal | Func::CurrVal | Func::SetVal | Func::LastVal => sequence_call(f, &args, cx)?,
        Func::SequenceRow => sequence_row(&args, cx)?,
        Func::Advisory(a) => super::advisory::call(a, &args, cx)?,
        Func::Abs => match &args[0] {
            Value::Int(i) => Value::Int(i.checked_abs().ok_or_else(|| SqlError::out_of_range("bigint"))?),
            Value::Float(x) => Value::Float(x.abs()),
            Value::Numeric(n) => Value::Numeric(n.abs()),
            Value::Float4(x) => Value::Float4(x.abs()),
            _ => Value::Null,
        },
        Func::ArrayCons
        | Func::ArrayConsNested
        | Func::ArrayCat
        | Func::ArrayAppend
        | Func::ArrayPrepend
        | Func::Subscript(_)
        | Func::SubscriptAssign(_)
        | Func::JsonbSubscript
        | Func::JsonbSubscriptAssign { .. }
        | Func::ArrayToString
        | Func::ArrayUpper
        | Func::ArrayLower
        | Func::ArrayLength
        | Func::Cardinality
        | Func::ArrayNdims
        | Func::ArrayDims
        | Func::ArrayPosition
        | Func::ArrayPositions
        | Func::ArrayRemove
        | Func::ArrayReplace
        | Func::ArrayFill
        | Func::TrimArray
        | Func::WidthBucketArray
        | Func::ArrayContains
        | Func::ArrayOverlap
        | Func::LikeAny { .. }
        | Func::Any { .. } => super::array::array_func(f, &args, cx.style())?,
        Func::Regex { negated, icase } => match (&args[0], &args[1]) {
            (Value::Text(s), Value::Text(p)) => {
                Value::Bool(super::array::regex_match(s, p, icase)? != negated)
            }
            _ => Value::Null,
        },
        Func::IsBool { want, negated } => {
            let is = match (&args[0], want) {
                (Value::Null, None) => true,
                (Value::Bool(b), Some(w)) => *b == w,
                _ => false,
            };
            Value::Bool(is != negated)
        }
        Func::IsDistinct { negated, bpchar } => {
            let distinct = match (&args[0], &args[1]) {
                (Value::Null, Value::Null) => false,
                (Value::Null, _) | (_, Value::Null) => true,
                (a, b) => compare(a, b, bpchar)?.is_ne(),
            };
            Value::Bool(distinct != negated)
        }
        Func::TypeOf => args[1].clone(),
        Func::MakeRecord => Value::Record(args.into()),
        Func::Field(i) => match &args[0] {
            Value::Record(fields) => fields.get(i).cloned().unwrap_or(Value::Null),
            _ => Value::Null,
        },
        Func::QuoteIdent => match &args[0] {
            Value::Text(s) => Value::Text(snapscale_values::quote_ident(s)),
            _ => Value::Null,
        },
        Func::Catalog(c) => match cx.catalog {
            Some(catalog) => catalog.call(c, &args)?,
            None => {
                return Err(SqlError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    "catalog functions are not available here",
                ))
            }
        },
        Func::Lower | Func::Upper | Func::Length => match &args[0] {
            Value::Null => Value::Null,
            Value::Text(s) => match f {
                Func::Lower => Value::Text(s.to_lowercase()),
                Func::Upper => Value::Text(s.to_uppercase()),
                _ => Value::Int(s.chars().count() as i64),
            },
            other => {
                return Err(SqlError::new(
                    SqlState::UNDEFINED_FUNCTION,
                    format!("function does not exist for {other:?}"),
                ))
            }
        },
    })
}

/// `substring(s FROM start FOR count)`: characters start .. start+count,
/// where positions before 1 count but select nothing; a negative count is
/// 22011.
fn substring(args: &[Value]) -> Result<Value, SqlError> {
    let (Value::Text(s), Value::Int(start)) = (&args[0], &args[1]) else { return Ok(Value::Null) };
    let end = match args.get(2) {
        None => i64::MAX,
        Some(Value::Int(n)) if *n < 0 => {
            return Err(SqlError::new(SqlState::SUBSTRING_ERROR, "negative substring length not allowed"))
        }
        Some(Value::Int(n)) => start.saturating_add(*n),
        Some(_) => return Ok(Value::Null),
    };
    let from = (*start).max(1);
    if end <= from {
        return Ok(Value::Text(String::new()));
    }
    let skip = usize::try_from(from - 1).unwrap_or(usize::MAX);
    let take = usize::try_from(end - from).unwrap_or(usize::MAX);
    Ok(Value::Text(s.chars().skip(skip).take(take).collect()))
}

/// Evaluates nextval / currval / setval / lastval (arguments as the binder
/// makes them, see `Func::NextVal`).
#[inline(never)]
fn sequence_call(f: Func, args: &[Value], cx: &Ctx<'_>) -> Result<Value, SqlError> {
    let session = cx.session.map(|s| &s.sequences);
    if f == Func::LastVal {
        let last = session.and_then(|s| s.lock().expect("session sequences poisoned").last);
        return last.map(Value::Int).ok_or_else(|| {
            SqlError::new(
                SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
                "lastval is not yet defined in this session",
            )
        });
    }
    let (Value::Int(storage), Value::Text(name), Value::Bool(logged)) = (&args[0], &args[1], &args[2]) else {
        return Err(SqlError::new(SqlState::INTERNAL_ERROR, "a sequence function lost its sequence"));
    };
    let storage = *storage as u64;
    if f == Func::CurrVal {
        let value = session
            .and_then(|s| s.lock().expect("session sequences poisoned").current.get(&storage).copied());
        return value.map(Value::Int).ok_or_else(|| {
            SqlError::new(
                SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
                format!("currval of sequence \"{name}\" is not yet defined in this session"),
            )
        });
    }
    let db =
        cx.db.ok_or_else(|| SqlError::new(SqlState::INTERNAL_ERROR, "no database to take a value from"))?;
    if db.in_recovery() {
        let what = if f == Func::NextVal { "nextval()" } else { "setval()" };
        return Err(SqlError::new(
            SqlState::READ_ONLY_SQL_TRANSACTION,
            format!("cannot execute {what} in a read-only transaction"),
        ));
    }
    let heap = db.catalog.storage(storage).ok_or_else(|| {
        SqlError::new(SqlState::UNDEFINED_TABLE, format!("relation \"{name}\" does not exist"))
    })?;
    let sequence = heap
        .sequence
        .get()
        .ok_or_else(|| SqlError::new(SqlState::WRONG_OBJECT_TYPE, format!("\"{name}\" is not a sequence")))?;
    let wal = match (&db.log, *logged) {
        (Some(log), true) => Some(snapscale_engine::redo::SequenceWal { log, storage }),
        _ => None,
    };
    let log = wal.as_ref().map(|w| w as &dyn snapscale_engine::sequence::SeqLog);
    let (value, set, end) = if f == Func::NextVal {
        let (v, end) = sequence.next(name, log)?;
        (v, true, end)
    } else {
        let (Value::Int(v), called) = (&args[3], &args[4]) else {
            // setval(seq, NULL): PostgreSQL's function is strict.
            return Ok(Value::Null);
        };
        let called = match called {
            Value::Bool(c) => *c,
            _ => return Ok(Value::Null),
        };
        (*v, called, sequence.set(name, *v, called, log)?)
    };
    if let Some(s) = session {
        let mut s = s.lock().expect("session sequences poisoned");
        s.wrote(end);
        if set {
            s.current.insert(storage, value);
        }
        if f == Func::NextVal {
            s.last = Some(value);
        }
    }
    Ok(Value::Int(value))
}

/// One column of a sequence read as a relation, as it is now (not
/// transactional, as in PostgreSQL).
fn sequence_row(args: &[Value], cx: &Ctx<'_>) -> Result<Value, SqlError> {
    let (Value::Int(storage), Value::Text(name), Value::Int(column)) = (&args[0], &args[1], &args[2]) else {
        return Err(SqlError::new(SqlState::INTERNAL_ERROR, "a sequence row lost its sequence"));
    };
    let db =
        cx.db.ok_or_else(|| SqlError::new(SqlState::INTERNAL_ERROR, "no database to read a sequence in"))?;
    let sequence = db.catalog.storage(*storage as u64).and_then(|h| h.sequence.get().map(|s| s.row()));
    let Some((now, log_cnt)) = sequence else {
        return Err(SqlError::new(SqlState::UNDEFINED_TABLE, format!("relation \"{name}\" does not exist")));
    };
    Ok(match column {
        0 => Value::Int(now.last),
        1 => Value::Int(log_cnt),
        _ => Value::Bool(now.called),
    })
}

/// The session view, where one is attached.
fn session<'a>(cx: &Ctx<'a>) -> Result<Option<&'a SessionView>, SqlError> {
    Ok(cx.session)
}
