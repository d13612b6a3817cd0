//! pg_trigger and pg_get_triggerdef: a table's triggers (TRIGGER-ROWS) as
//! PostgreSQL's catalog shows them.

use snapscale_engine::catalog::RelEntry;
use snapscale_engine::triggers::{TriggerDef, TriggerTiming};
use snapscale_values::{quote_ident, Value};

use super::defs::PG_TRIGGER;
use super::{CatalogState, RowBuilder};

/// pg_trigger's rows.
pub(super) fn triggers(state: &CatalogState) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for e in &state.relations {
        for t in &e.triggers {
            let attnums: Vec<Value> =
                t.columns.iter().filter_map(|c| e.column(c)).map(|k| Value::Int(k as i64 + 1)).collect();
            let mut args = Vec::new();
            for a in &t.args {
                args.extend_from_slice(a.as_bytes());
                args.push(0);
            }
            let row = RowBuilder::new(PG_TRIGGER)
                .set("oid", t.oid)
                .set("tgrelid", e.oid)
                .set("tgparentid", 0u32)
                .set("tgname", t.name.as_str())
                .set("tgfoid", t.function)
                .set("tgtype", Value::Int(i64::from(t.tgtype())))
                .set("tgenabled", t.enabled as char)
                .set("tgisinternal", false)
                .set("tgconstrrelid", 0u32)
                .set("tgconstrindid", 0u32)
                .set("tgconstraint", 0u32)
                .set("tgdeferrable", t.deferrable)
                .set("tginitdeferred", t.initially_deferred)
                .set("tgnargs", Value::Int(t.args.len() as i64))
                .set("tgattr", Value::array(attnums))
                .set("tgargs", Value::Bytes(args.into()))
                .set("tgqual", t.when.clone().map_or(Value::Null, Value::Text))
                .set("tgoldtable", t.old_table.clone().map_or(Value::Null, Value::Text))
                .set("tgnewtable", t.new_table.clone().map_or(Value::Null, Value::Text));
            out.push(row.build());
        }
    }
    out
}

/// pg_get_triggerdef(oid [, pretty]).
pub(super) fn trigger_def(state: &CatalogState, oid: u32, pretty: bool) -> Option<String> {
    let (e, t) =
        state.relations.iter().find_map(|e| e.triggers.iter().find(|t| t.oid == oid).map(|t| (e, t)))?;
    Some(definition(state, e, t, pretty))
}

fn definition(state: &CatalogState, e: &RelEntry, t: &TriggerDef, pretty: bool) -> String {
    let mut s = format!(
        "CREATE {}TRIGGER {} {}",
        if t.constraint { "CONSTRAINT " } else { "" },
        quote_ident(&t.name),
        match t.timing {
            TriggerTiming::Before => "BEFORE",
            TriggerTiming::After => "AFTER",
            TriggerTiming::InsteadOf => "INSTEAD OF",
        }
    );
    let words: Vec<String> = t
        .event_words()
        .into_iter()
        .map(|w| match w.strip_prefix("UPDATE OF ") {
            Some(_) => format!(
                "UPDATE OF {}",
                t.columns.iter().map(|c| quote_ident(c)).collect::<Vec<_>>().join(", ")
            ),
            None => w,
        })
        .collect();
    s.push(' ');
    s.push_str(&words.join(" OR "));
    let table = if pretty { quote_ident(&e.name) } else { super::functions::qualified_name(state, e) };
    s.push_str(&format!(" ON {table} "));
    if t.constraint {
        if !t.deferrable {
            s.push_str("NOT ");
        }
        s.push_str("DEFERRABLE INITIALLY ");
        s.push_str(if t.initially_deferred { "DEFERRED " } else { "IMMEDIATE " });
    }
    if t.old_table.is_some() || t.new_table.is_some() {
        s.push_str("REFERENCING ");
        if let Some(n) = &t.old_table {
            s.push_str(&format!("OLD TABLE AS {} ", quote_ident(n)));
        }
        if let Some(n) = &t.new_table {
            s.push_str(&format!("NEW TABLE AS {} ", quote_ident(n)));
        }
    }
    s.push_str(if t.row { "FOR EACH ROW " } else { "FOR EACH STATEMENT " });
    if let Some(w) = &t.when {
        s.push_str(&format!("WHEN ({}) ", super::functions::when_text(w, pretty)));
    }
    let function = state
        .routines
        .iter()
        .find(|r| r.oid == t.function)
        .map_or_else(|| t.function.to_string(), |r| super::functions::routine_name(state, r));
    let args: Vec<String> = t.args.iter().map(|a| format!("'{}'", a.replace('\'', "''"))).collect();
    s.push_str(&format!("EXECUTE FUNCTION {function}({})", args.join(", ")));
    s
}
