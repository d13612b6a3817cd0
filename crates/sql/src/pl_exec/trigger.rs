//! Trigger functions called for the executor ([`TriggerHost`],
//! TRIGGER-FIRE in the crate README): what a statement is lent to fire its
//! triggers with, and a trigger function's call with NEW, OLD and the TG_
//! variables.

use std::collections::HashMap;
use std::sync::Arc;

use snapscale_engine::catalog::{RelEntry, Row};
use snapscale_engine::triggers::{events, TriggerTiming};
use snapscale_engine::xact::Xact;
use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, SqlType, Value};

use super::run::BuildAddr;
use super::spi::Spi;
use crate::exec::ri;
use crate::exec::triggers::{Fired, TriggerCall, TriggerHost};
use crate::expr::Expr;
use crate::limits::StatementLimits;
use crate::plan::switches::PlannerSettings;

/// A record's fields: a table's columns' names and types.
type Fields = Arc<[(String, SqlType)]>;

/// What a statement fires its triggers with: the session's settings and
/// compiled functions ([`Spi`] without the transaction, which the
/// executor lends with each call).
pub(crate) struct Host<'h> {
    limits: StatementLimits,
    planner: PlannerSettings,
    in_block: bool,
    deferral: ri::Deferral,
    depth: usize,
    functions: &'h mut super::Functions,
    portals: &'h mut crate::portals::Portals,
    stack: (std::thread::ThreadId, usize),
    /// Foreign-key checks put off to COMMIT by the triggers' statements.
    pub put_off: Vec<ri::Pending>,
    /// The trigger functions called so far, by oid, and the TG_
    /// variables their bodies name ([`TgNamed`]).
    routines: HashMap<u32, (Arc<RelEntry>, TgNamed), BuildAddr>,
    /// The tables fired on so far: their columns, as NEW's and OLD's
    /// fields, and a row of NULLs as wide (the record of an event without
    /// such a row), by the table row they are of.
    columns: HashMap<u32, (Arc<RelEntry>, Fields, Row), BuildAddr>,
    /// WHEN conditions bound so far, by trigger oid, with the table row
    /// they were bound for.
    whens: HashMap<u32, (Arc<RelEntry>, Expr), BuildAddr>,
    /// Schema names, by oid (TG_TABLE_SCHEMA).
    schemas: HashMap<u32, String>,
}

impl<'h> Host<'h> {
    /// The host for statements run through `spi` (its transaction aside).
    pub(crate) fn new(
        limits: StatementLimits,
        planner: PlannerSettings,
        in_block: bool,
        deferral: ri::Deferral,
        depth: usize,
        (functions, portals): (&'h mut super::Functions, &'h mut crate::portals::Portals),
        stack: (std::thread::ThreadId, usize),
    ) -> Host<'h> {
        Host {
            limits,
            planner,
            in_block,
            deferral,
            depth,
            functions,
            portals,
            stack,
            put_off: Vec::new(),
            routines: HashMap::default(),
            columns: HashMap::default(),
            whens: HashMap::default(),
            schemas: HashMap::new(),
        }
    }

    fn routine(&mut self, xact: &mut Xact, oid: u32) -> Result<(Arc<RelEntry>, TgNamed), SqlError> {
        if let Some((r, tg)) = self.routines.get(&oid) {
            return Ok((Arc::clone(r), *tg));
        }
        let Some((_, r)) = xact.routine_by_oid(oid)? else {
            return Err(SqlError::new(
                SqlState::UNDEFINED_FUNCTION,
                format!("function with OID {oid} does not exist"),
            ));
        };
        let tg = TgNamed::in_body(r.routine.as_ref().map_or("", |d| d.body.as_str()));
        self.routines.insert(oid, (Arc::clone(&r), tg));
        Ok((r, tg))
    }

    /// A table's columns as NEW's and OLD's fields, and a row of as many
    /// NULLs.
    fn columns(&mut self, entry: &Arc<RelEntry>) -> (Fields, Row) {
        match self.columns.get(&entry.oid) {
            Some((e, c, nulls)) if Arc::ptr_eq(e, entry) => (Arc::clone(c), Arc::clone(nulls)),
            _ => {
                let c: Fields = entry.columns.iter().map(|c| (c.name.clone(), c.ty)).collect();
                let nulls: Row = std::iter::repeat_n(Value::Null, c.len()).collect();
                self.columns.insert(entry.oid, (Arc::clone(entry), Arc::clone(&c), Arc::clone(&nulls)));
                (c, nulls)
            }
        }
    }

    /// What the functions it calls run their statements with.
    fn spi<'s>(&'s mut self, xact: &'s mut Xact) -> Spi<'s> {
        Spi {
            xact,
            limits: self.limits,
            planner: self.planner,
            in_block: self.in_block,
            deferral: self.deferral.clone(),
            put_off: Vec::new(),
            depth: self.depth,
            functions: &mut *self.functions,
            portals: &mut *self.portals,
            capture: None,
            current_of: None,
            stack: self.stack,
            // Triggers and calls made per row run inside their statement.
            nonatomic: false,
            default_isolation: snapscale_engine::IsolationLevel::ReadCommitted,
            ended: false,
            context: Default::default(),
        }
    }

    fn schema(&mut self, xact: &mut Xact, entry: &RelEntry) -> Result<String, SqlError> {
        if entry.temp_owner.is_some() {
            return Ok("pg_temp".into());
        }
        if entry.namespace == snapscale_engine::catalog::PUBLIC_NAMESPACE {
            return Ok("public".into());
        }
        if let Some(s) = self.schemas.get(&entry.namespace) {
            return Ok(s.clone());
        }
        let name = xact.namespace_name(entry.namespace)?.unwrap_or_default();
        self.schemas.insert(entry.namespace, name.clone());
        Ok(name)
    }
}

impl TriggerHost for Host<'_> {
    fn call<'a>(
        &'a mut self,
        xact: &'a mut Xact,
        routine: &'a Arc<RelEntry>,
        args: Vec<Value>,
    ) -> Fired<'a, Value> {
        Box::pin(async move {
            let mut spi = self.spi(xact);
            let result = super::call(&mut spi, routine, args).await;
            let mut put_off = std::mem::take(&mut spi.put_off);
            drop(spi);
            self.put_off.append(&mut put_off);
            result
        })
    }

    fn when(&mut self, xact: &mut Xact, call: &TriggerCall<'_>) -> Result<bool, SqlError> {
        let Some(text) = &call.trigger.when else { return Ok(true) };
        let fresh = match self.whens.get(&call.trigger.oid) {
            Some((entry, _)) => !Arc::ptr_eq(entry, &call.rel.entry),
            None => true,
        };
        if fresh {
            let e = crate::bind::triggers::bind_when(xact, call.rel, text, self.limits.max_stack_depth)?;
            self.whens.insert(call.trigger.oid, (Arc::clone(&call.rel.entry), e));
        }
        let (_, e) = &self.whens[&call.trigger.oid];
        let width = call.rel.entry.columns.len();
        let mut row = Vec::with_capacity(2 * width);
        for side in [call.old, call.new] {
            match side {
                Some(values) => row.extend_from_slice(values),
                None => row.extend(std::iter::repeat_n(Value::Null, width)),
            }
        }
        Ok(matches!(crate::exec::evaluate_over(xact, self.limits, e, &row)?, Value::Bool(true)))
    }

    fn fire<'a>(&'a mut self, xact: &'a mut Xact, call: TriggerCall<'a>) -> Fired<'a, Option<Vec<Value>>> {
        Box::pin(async move {
            let (routine, named) = self.routine(xact, call.trigger.function)?;
            let tg = match named.any() {
                true => {
                    let schema = match named.has(TG_TABLE_SCHEMA) {
                        true => self.schema(xact, &call.rel.entry)?,
                        false => String::new(),
                    };
                    tg_values(&call, schema, named)
                }
                false => Vec::new(),
            };
            let (columns, nulls) = self.columns(&call.rel.entry);
            let depth = Depth::enter(xact);
            let mut spi = self.spi(&mut *xact);
            let result = super::call_trigger(&mut spi, &routine, &call, (&columns, &nulls), tg).await;
            drop(depth);
            let mut put_off = std::mem::take(&mut spi.put_off);
            drop(spi);
            self.put_off.append(&mut put_off);
            let returned = result?;
            let width = call.rel.entry.columns.len();
            let row = super::Interp::returned_row(&returned, width).map_err(|e| {
                SqlError::from(snapscale_values::ErrorData {
                    context: Some(format!("PL/pgSQL function {}()", routine.name)),
                    ..e.into_data()
                })
            })?;
            // A BEFORE ROW trigger's row: coerced to the table's columns.
            let row = match row {
                Some(values) if call.trigger.timing == TriggerTiming::Before && call.trigger.row => {
                    Some(fit_row(&call.rel.entry, values, xact.session_style())?)
                }
                other => other,
            };
            Ok(row)
        })
    }
}

/// One level of pg_trigger_depth() while a trigger function runs: left
/// when dropped, however the call ends (an error, a panic unwinding).
struct Depth(Option<Arc<std::sync::atomic::AtomicU32>>);

impl Depth {
    fn enter(xact: &Xact) -> Depth {
        let d = xact.session_view.as_ref().map(|v| Arc::clone(&v.trigger_depth));
        if let Some(d) = &d {
            // Relaxed: a count only this session changes and reads (its
            // statements run one at a time); it publishes no other data.
            // Pairs with the fetch_sub in `drop` and the load in
            // pg_trigger_depth() (expr/func.rs).
            d.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        Depth(d)
    }
}

impl Drop for Depth {
    fn drop(&mut self) {
        if let Some(d) = &self.0 {
            // Relaxed: pairs with the fetch_add in `enter` (see there).
            d.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

/// A returned row's values as the table's column types.
fn fit_row(
    entry: &RelEntry,
    values: Vec<Value>,
    style: snapscale_values::Style,
) -> Result<Vec<Value>, SqlError> {
    values
        .into_iter()
        .zip(&entry.columns)
        .map(|(v, c)| match v {
            Value::Null => Ok(v),
            v => crate::expr::cast(v, c.ty, false, style),
        })
        .collect()
}

/// Which TG_ variables a trigger function's body names, a bit each in
/// [`crate::plpgsql::TRIGGER_NAMES`]' order from TG_NAME: a call makes the
/// values of those alone (the others are declared NULL: no code can read
/// a variable it does not name). A name inside a string or a comment only
/// costs its value.
#[derive(Clone, Copy)]
struct TgNamed(u16);

/// TG_TABLE_SCHEMA's bit (its value is looked up).
const TG_TABLE_SCHEMA: usize = 7;

impl TgNamed {
    fn in_body(body: &str) -> TgNamed {
        let body = body.to_ascii_lowercase();
        let mut bits = 0u16;
        for (i, name) in crate::plpgsql::TRIGGER_NAMES[2..].iter().enumerate() {
            if body.contains(name) {
                bits |= 1 << i;
            }
        }
        TgNamed(bits)
    }

    fn any(self) -> bool {
        self.0 != 0
    }

    fn has(self, i: usize) -> bool {
        self.0 & (1 << i) != 0
    }
}

/// The TG_ variables' values for `call` (after NEW and OLD, in
/// [`crate::plpgsql::TRIGGER_NAMES`]' order), NULL where the body does not
/// name one (`named`).
fn tg_values(call: &TriggerCall<'_>, schema: String, named: TgNamed) -> Vec<(SqlType, Value)> {
    let t = call.trigger;
    let when = match t.timing {
        TriggerTiming::Before => "BEFORE",
        TriggerTiming::After => "AFTER",
        TriggerTiming::InsteadOf => "INSTEAD OF",
    };
    let op = match call.event {
        events::INSERT => "INSERT",
        events::DELETE => "DELETE",
        events::UPDATE => "UPDATE",
        _ => "TRUNCATE",
    };
    let text = |s: &str| Value::Text(s.to_owned());
    let mut values = [
        (SqlType::Name, Value::Null),
        (SqlType::Text, Value::Null),
        (SqlType::Text, Value::Null),
        (SqlType::Text, Value::Null),
        (SqlType::Oid, Value::Null),
        (SqlType::Name, Value::Null),
        (SqlType::Name, Value::Null),
        (SqlType::Name, Value::Null),
        (SqlType::Int4, Value::Null),
        (SqlType::Array(snapscale_values::Elem::Text), Value::Null),
    ];
    for (i, (_, v)) in values.iter_mut().enumerate() {
        if !named.has(i) {
            continue;
        }
        *v = match i {
            0 => text(&t.name),
            1 => text(when),
            2 => text(if t.row { "ROW" } else { "STATEMENT" }),
            3 => text(op),
            4 => Value::Int(i64::from(call.rel.entry.oid)),
            5 | 6 => text(&call.rel.entry.name),
            TG_TABLE_SCHEMA => text(&schema),
            8 => Value::Int(t.args.len() as i64),
            _ => match t.args.is_empty() {
                true => Value::Null,
                false => Value::Array(Arc::new(snapscale_values::Array::with_lower(
                    0,
                    t.args.iter().map(|a| Value::Text(a.clone())).collect(),
                ))),
            },
        };
    }
    values.into()
}
