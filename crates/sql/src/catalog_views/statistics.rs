//! The planner statistics ANALYZE keeps (the engine's statistics slot of
//! each heap, STATS-SLOT): `pg_statistic`, one row per analyzed column,
//! and the `pg_stats` view over it. anyarray columns (the values) are
//! shown as the text of an array of the values, as PostgreSQL prints
//! them; `pg_operator` has no rows here, so the operators the slots name
//! (staop) are 0.

use std::sync::Arc;

use snapscale_engine::catalog::RelEntry;
use snapscale_engine::stats::{ColumnStats, RelStats};
use snapscale_values::{Array, SqlType, Value};

use super::defs::{PG_STATISTIC, PG_STATS};
use super::{CatalogState, RowBuilder};

/// PostgreSQL's statistics kinds (pg_statistic.stakindN).
const KIND_MCV: i64 = 1;
const KIND_HISTOGRAM: i64 = 2;
const KIND_CORRELATION: i64 = 3;
/// The default collation's oid: a collatable column's slots name it.
const DEFAULT_COLLATION: u32 = 100;

/// Every column of every relation `state` sees that has statistics,
/// with its attnum.
fn analyzed(state: &CatalogState) -> Vec<(&Arc<RelEntry>, Arc<RelStats>, usize)> {
    let mut out = Vec::new();
    for e in &state.relations {
        let Some(stats) = state.db.catalog.storage(e.storage).and_then(|h| h.stats.get()) else { continue };
        if e.view.is_some() || e.sequence.is_some() {
            continue;
        }
        for (i, c) in e.columns.iter().enumerate() {
            if stats.column(&c.name, c.ty).is_some() {
                out.push((e, Arc::clone(&stats), i));
            }
        }
    }
    out
}

/// The text of an array of `values` (an anyarray column's value).
fn values_text(values: &[Value]) -> Value {
    if values.is_empty() {
        return Value::Null;
    }
    let texts = values.iter().map(|v| v.to_text().map_or(Value::Null, Value::Text)).collect();
    Value::Array(Arc::new(Array::new(texts))).to_text().map_or(Value::Null, Value::Text)
}

fn reals(values: &[f32]) -> Value {
    if values.is_empty() {
        return Value::Null;
    }
    Value::Array(Arc::new(Array::new(values.iter().map(|&f| Value::Float4(f)).collect())))
}

/// The slots of a column's statistics, in PostgreSQL's order: (kind,
/// numbers, values).
fn slots(c: &ColumnStats) -> Vec<(i64, Value, Value)> {
    let mut out = Vec::new();
    if !c.mcv.is_empty() {
        out.push((KIND_MCV, reals(&c.mcf), values_text(&c.mcv)));
    }
    if !c.histogram.is_empty() {
        out.push((KIND_HISTOGRAM, Value::Null, values_text(&c.histogram)));
    }
    if let Some(r) = c.correlation {
        out.push((KIND_CORRELATION, reals(&[r]), Value::Null));
    }
    out
}

fn collatable(ty: SqlType) -> bool {
    matches!(ty, SqlType::Text | SqlType::Varchar(_) | SqlType::Char(_) | SqlType::Name)
}

/// pg_statistic.
pub(super) fn statistic(state: &CatalogState) -> Vec<Vec<Value>> {
    analyzed(state)
        .into_iter()
        .filter_map(|(e, stats, i)| {
            let col = &e.columns[i];
            let c = stats.column(&col.name, col.ty)?;
            let mut row = RowBuilder::new(PG_STATISTIC)
                .set("starelid", e.oid)
                .set("staattnum", (i + 1) as i64)
                .set("stainherit", false)
                .set("stanullfrac", Value::Float4(c.null_frac))
                .set("stawidth", i64::from(c.avg_width))
                .set("stadistinct", Value::Float4(c.n_distinct));
            let slots = slots(c);
            for k in 1..=5 {
                let slot = slots.get(k - 1);
                let coll = if slot.is_some() && collatable(col.ty) { DEFAULT_COLLATION } else { 0 };
                row = row
                    .set(&format!("stakind{k}"), slot.map_or(0, |s| s.0))
                    .set(&format!("staop{k}"), 0u32)
                    .set(&format!("stacoll{k}"), coll)
                    .set(&format!("stanumbers{k}"), slot.map_or(Value::Null, |s| s.1.clone()))
                    .set(&format!("stavalues{k}"), slot.map_or(Value::Null, |s| s.2.clone()));
            }
            Some(row.build())
        })
        .collect()
}

/// pg_stats.
pub(super) fn stats_view(state: &CatalogState) -> Vec<Vec<Value>> {
    analyzed(state)
        .into_iter()
        .filter_map(|(e, stats, i)| {
            let col = &e.columns[i];
            let c = stats.column(&col.name, col.ty)?;
            Some(
                RowBuilder::new(PG_STATS)
                    .set("schemaname", state.namespace_name(state.namespace_of(e)).unwrap_or_default())
                    .set("tablename", e.name.as_str())
                    .set("attname", col.name.as_str())
                    .set("inherited", false)
                    .set("null_frac", Value::Float4(c.null_frac))
                    .set("avg_width", i64::from(c.avg_width))
                    .set("n_distinct", Value::Float4(c.n_distinct))
                    .set("most_common_vals", values_text(&c.mcv))
                    .set("most_common_freqs", reals(&c.mcf))
                    .set("histogram_bounds", values_text(&c.histogram))
                    .set("correlation", c.correlation.map_or(Value::Null, Value::Float4))
                    .build(),
            )
        })
        .collect()
}
