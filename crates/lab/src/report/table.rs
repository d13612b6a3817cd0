//! An experiment's results as rows and columns, written as CSV and Markdown.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

/// One cell of a [`Table`].
///
/// Integers and floats are kept apart so each output format can print them
/// the way its reader expects: exact counts stay exact, measured rates get a
/// sensible number of decimals.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// Free text, such as a variant's name.
    Text(String),
    /// An exact count, such as a number of sessions.
    Int(i64),
    /// A measurement, such as transactions per second.
    Float(f64),
}

impl From<&str> for Value {
    fn from(text: &str) -> Value {
        Value::Text(text.to_owned())
    }
}

impl From<String> for Value {
    fn from(text: String) -> Value {
        Value::Text(text)
    }
}

impl From<i64> for Value {
    fn from(n: i64) -> Value {
        Value::Int(n)
    }
}

/// Makes untyped integer literals such as `Value::from(3)` compile: with
/// several integer conversions, Rust falls back to `i32` for a bare literal.
impl From<i32> for Value {
    fn from(n: i32) -> Value {
        Value::Int(i64::from(n))
    }
}

/// Counts beyond `i64::MAX` become floats: approximate but still numeric, so
/// the column keeps its alignment and sort order.
impl From<u64> for Value {
    fn from(n: u64) -> Value {
        i64::try_from(n).map_or(Value::Float(n as f64), Value::Int)
    }
}

/// Same overflow rule as `From<u64>`.
impl From<usize> for Value {
    fn from(n: usize) -> Value {
        i64::try_from(n).map_or(Value::Float(n as f64), Value::Int)
    }
}

impl From<f64> for Value {
    fn from(x: f64) -> Value {
        Value::Float(x)
    }
}

impl Value {
    /// The value as a CSV field, quoted per RFC 4180 when needed.
    fn csv_field(&self) -> String {
        match self {
            Value::Text(text) => csv_quote(text),
            Value::Int(n) => n.to_string(),
            Value::Float(x) => csv_float(*x),
        }
    }

    /// The value as a Markdown table cell.
    fn markdown_cell(&self) -> String {
        match self {
            // A raw `|` would end the cell and a newline would end the row.
            Value::Text(text) => text.replace('|', "\\|").replace('\n', "<br>"),
            Value::Int(n) => n.to_string(),
            // Big numbers carry their precision in the integer part; small
            // ones need decimals to be distinguishable.
            Value::Float(x) if x.abs() >= 100.0 => format!("{x:.1}"),
            Value::Float(x) => format!("{x:.3}"),
        }
    }

    fn is_numeric(&self) -> bool {
        matches!(self, Value::Int(_) | Value::Float(_))
    }
}

/// Quotes a CSV field if it holds a comma, quote or line break (RFC 4180).
fn csv_quote(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

/// Prints a float with at most three decimals and no trailing zeros.
///
/// Three decimals keep microsecond resolution for values in milliseconds;
/// trimming keeps whole numbers readable (`2` rather than `2.000`).
fn csv_float(x: f64) -> String {
    if !x.is_finite() {
        return x.to_string();
    }
    let fixed = format!("{x:.3}");
    let trimmed = fixed.trim_end_matches('0').trim_end_matches('.');
    match trimmed {
        "-0" => "0".to_owned(),
        _ => trimmed.to_owned(),
    }
}

/// An in-memory table of results, one row per measurement.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    columns: Vec<String>,
    rows: Vec<Vec<Value>>,
}

impl Table {
    /// Creates an empty table with the given column names.
    pub fn new(columns: &[&str]) -> Table {
        Table { columns: columns.iter().map(|&name| name.to_owned()).collect(), rows: Vec::new() }
    }

    /// Appends a row.
    ///
    /// # Panics
    ///
    /// If the row's length differs from the number of columns: a short or
    /// long row is a bug in the experiment, and silently shifting cells would
    /// put numbers under the wrong heading.
    pub fn push(&mut self, row: Vec<Value>) {
        assert_eq!(
            row.len(),
            self.columns.len(),
            "row has {} values but the table has columns {:?}",
            row.len(),
            self.columns
        );
        self.rows.push(row);
    }

    /// The column names, in order.
    pub fn columns(&self) -> &[String] {
        &self.columns
    }

    /// The rows pushed so far, in order.
    pub fn rows(&self) -> &[Vec<Value>] {
        &self.rows
    }

    /// Renders the table as CSV: a header line, then one line per row.
    pub fn csv(&self) -> String {
        let mut out = String::new();
        let header: Vec<String> = self.columns.iter().map(|name| csv_quote(name)).collect();
        out.push_str(&header.join(","));
        out.push('\n');
        for row in &self.rows {
            let fields: Vec<String> = row.iter().map(Value::csv_field).collect();
            out.push_str(&fields.join(","));
            out.push('\n');
        }
        out
    }

    /// Writes [`Table::csv`] to `path`, replacing any existing file.
    pub fn write_csv(&self, path: &Path) -> std::io::Result<()> {
        fs::write(path, self.csv())
    }

    /// Renders the table as a GitHub-flavoured Markdown table.
    ///
    /// Cells are padded to their column's width so the raw text reads as a
    /// table too, and columns holding only numbers are right-aligned so their
    /// magnitudes line up. A table without columns renders as nothing.
    pub fn markdown(&self) -> String {
        if self.columns.is_empty() {
            return String::new();
        }
        let header: Vec<String> =
            self.columns.iter().map(|name| Value::Text(name.clone()).markdown_cell()).collect();
        let body: Vec<Vec<String>> =
            self.rows.iter().map(|row| row.iter().map(Value::markdown_cell).collect()).collect();
        let numeric: Vec<bool> = (0..self.columns.len())
            .map(|col| !self.rows.is_empty() && self.rows.iter().all(|row| row[col].is_numeric()))
            .collect();
        // GitHub needs at least three dashes in a delimiter cell.
        let widths: Vec<usize> = (0..self.columns.len())
            .map(|col| {
                body.iter()
                    .map(|row| row[col].chars().count())
                    .chain([header[col].chars().count(), 3])
                    .max()
                    .unwrap_or(3)
            })
            .collect();

        let mut out = String::new();
        push_markdown_row(&mut out, &header, &widths, &numeric);
        let delimiters: Vec<String> = widths
            .iter()
            .zip(&numeric)
            .map(
                |(&width, &right)| {
                    if right {
                        format!("{}:", "-".repeat(width - 1))
                    } else {
                        "-".repeat(width)
                    }
                },
            )
            .collect();
        push_markdown_row(&mut out, &delimiters, &widths, &numeric);
        for row in &body {
            push_markdown_row(&mut out, row, &widths, &numeric);
        }
        out
    }
}

/// Appends one `| a | b |` line, padding each cell to its column's width.
fn push_markdown_row(out: &mut String, cells: &[String], widths: &[usize], right: &[bool]) {
    out.push('|');
    for ((cell, &width), &right) in cells.iter().zip(widths).zip(right) {
        // Writing to a String cannot fail.
        let _ = if right { write!(out, " {cell:>width$} |") } else { write!(out, " {cell:<width$} |") };
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_only_when_needed() {
        assert_eq!(csv_quote("plain text"), "plain text");
        assert_eq!(csv_quote("a,b"), "\"a,b\"");
        assert_eq!(csv_quote("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_quote("two\nlines"), "\"two\nlines\"");
        assert_eq!(csv_quote("cr\r"), "\"cr\r\"");
    }

    #[test]
    fn csv_floats_are_trimmed() {
        assert_eq!(csv_float(1.5), "1.5");
        assert_eq!(csv_float(2.0), "2");
        assert_eq!(csv_float(0.12345), "0.123");
        assert_eq!(csv_float(1234.0006), "1234.001");
        assert_eq!(csv_float(-0.0001), "0");
        assert_eq!(csv_float(100.0), "100");
        assert_eq!(csv_float(f64::NAN), "NaN");
    }

    #[test]
    fn csv_document() {
        let mut table = Table::new(&["variant", "sessions", "tps"]);
        table.push(vec!["baseline, old".into(), 10_u64.into(), 1234.5.into()]);
        table.push(vec!["csn".into(), 10_000_usize.into(), 0.25.into()]);
        assert_eq!(table.csv(), "variant,sessions,tps\n\"baseline, old\",10,1234.5\ncsn,10000,0.25\n");
    }

    #[test]
    fn write_csv_creates_the_file() {
        let dir = std::env::temp_dir().join(format!("snapscale-table-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.csv");
        let mut table = Table::new(&["a"]);
        table.push(vec![Value::from(1)]);
        table.write_csv(&path).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "a\n1\n");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn markdown_aligns_numbers_right() {
        let mut table = Table::new(&["variant", "sessions", "tps"]);
        table.push(vec!["baseline".into(), 0_i64.into(), 123_456.78.into()]);
        table.push(vec!["a|b".into(), 10_000_i64.into(), 1.23456.into()]);
        let expected = "\
| variant  | sessions |      tps |
| -------- | -------: | -------: |
| baseline |        0 | 123456.8 |
| a\\|b     |    10000 |    1.235 |
";
        assert_eq!(table.markdown(), expected);
    }

    #[test]
    fn markdown_mixed_column_is_left_aligned() {
        let mut table = Table::new(&["x"]);
        table.push(vec![1.into()]);
        table.push(vec!["n/a".into()]);
        assert_eq!(table.markdown(), "| x   |\n| --- |\n| 1   |\n| n/a |\n");
        assert_eq!(Table::new(&[]).markdown(), "");
    }

    #[test]
    #[should_panic(expected = "row has 1 values")]
    fn push_rejects_short_rows() {
        Table::new(&["a", "b"]).push(vec![1.into()]);
    }

    #[test]
    fn huge_unsigned_becomes_float() {
        assert_eq!(Value::from(u64::MAX), Value::Float(u64::MAX as f64));
        assert_eq!(Value::from(7_u64), Value::Int(7));
    }
}
