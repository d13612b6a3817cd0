//! Columns a stored row lacks (MISSING-COLUMN in the crate README).
//!
//! ALTER TABLE … ADD COLUMN with a default that is not volatile (or with
//! none) changes only the catalog row, as PostgreSQL 11 and later do: the
//! rows already stored keep their width, and whoever reads one through a
//! definition with more columns sees each column it lacks hold the value
//! that column was added with (PostgreSQL's `attmissingval`; NULL for a
//! column added without a default). A stored row is its columns followed
//! by its row id (ROW-ID), so a row is short exactly when its length is
//! at most the definition's column count.

use snapscale_values::Value;

/// `row` (its values, then its row id) widened to `width` columns: each
/// column it lacks, from its own width up, takes `missing(column)`; the
/// row id stays last.
pub fn pad(row: &[Value], width: usize, missing: impl Fn(usize) -> Value) -> Vec<Value> {
    let stored = row.len().saturating_sub(1);
    let mut out = Vec::with_capacity(width + 1);
    out.extend_from_slice(&row[..stored]);
    out.extend((stored..width).map(missing));
    out.push(row.last().cloned().unwrap_or(Value::Null));
    out
}

/// True if `row` (values, then row id) lacks some of `width` columns.
pub fn is_short(row: &[Value], width: usize) -> bool {
    row.len() <= width
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_row_takes_each_lacking_columns_value_before_its_row_id() {
        let row = [Value::Int(1), Value::Int(77)];
        assert!(is_short(&row, 3));
        let wide = pad(&row, 3, |c| if c == 1 { Value::Text("d".into()) } else { Value::Null });
        assert_eq!(wide, vec![Value::Int(1), Value::Text("d".into()), Value::Null, Value::Int(77)]);
    }

    #[test]
    fn a_full_row_is_not_short() {
        let row = [Value::Int(1), Value::Int(2), Value::Int(77)];
        assert!(!is_short(&row, 2));
        assert!(is_short(&row, 3));
    }
}
