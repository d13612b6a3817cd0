//! COPY: TO STDOUT as one statement (of a table or a query), and FROM
//! STDIN as a sub-protocol of the session (the rows arrive in CopyData
//! messages until CopyDone), in the text, CSV and binary formats.

use snapscale_engine::catalog::Row;
use snapscale_engine::Tid;
use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, SqlType, Value};

use super::Executor;
use crate::copy::{binary, csv, text, CopyFormat, CopyOptions};
use crate::expr::Expr;
use crate::output::Output;
use crate::plan::{Column, Rel};

/// A COPY FROM STDIN in progress.
pub(crate) struct CopyIn {
    rel: Rel,
    columns: Vec<usize>,
    defaults: Vec<(usize, Expr)>,
    options: CopyOptions,
    /// The session's TimeZone: timestamptz text without a zone is its.
    zone: snapscale_values::Style,
    /// The copied columns' types.
    types: Vec<SqlType>,
    /// Bytes of a row not yet complete.
    pub(crate) pending: Vec<u8>,
    pub(crate) rows: u64,
    /// The end of the data was seen (`\\.`, or binary's trailer): the rest
    /// is ignored.
    ended: bool,
    /// The CSV header line was skipped, or the binary header read.
    started: bool,
    line: u64,
    /// The defaults may wait for a lock (EVAL-REPLAY).
    pub(crate) waits: bool,
    /// Per copied column, the labels of its enum type (read through them).
    pub(crate) enums: Vec<Option<std::sync::Arc<crate::expr::user_types::EnumLabels>>>,
    /// The copied columns' domain constraints, evaluated over each row.
    pub(crate) checks: Vec<Expr>,
    /// The table's CHECK constraints.
    pub(crate) table_checks: Vec<crate::plan::TableCheck>,
    /// The foreign keys its rows hold.
    pub(crate) foreign_keys: std::sync::Arc<crate::plan::ForeignKeys>,
    /// The BEFORE STATEMENT triggers fired (with the first data, or at
    /// its end if there is none).
    before_fired: bool,
    /// The rows kept for the table's transition tables so far: each batch
    /// of data runs in an executor of its own.
    captured: Vec<super::triggers::Captured>,
}

impl CopyIn {
    pub(crate) fn new(
        rel: Rel,
        columns: Vec<usize>,
        defaults: Vec<(usize, Expr)>,
        options: CopyOptions,
        zone: snapscale_values::Style,
    ) -> CopyIn {
        let types = columns.iter().map(|&c| rel.entry.columns[c].ty).collect();
        let started = !(options.header || options.format == CopyFormat::Binary);
        CopyIn {
            rel,
            columns,
            defaults,
            options,
            zone,
            types,
            pending: Vec::new(),
            rows: 0,
            ended: false,
            started,
            line: 0,
            enums: Vec::new(),
            checks: Vec::new(),
            table_checks: Vec::new(),
            foreign_keys: Default::default(),
            waits: false,
            before_fired: false,
            captured: Vec::new(),
        }
    }
}

/// COPY … TO STDOUT's output: `rows` (of `columns`) in the format.
pub(crate) fn copy_out<'r>(
    columns: &[Column],
    rows: impl Iterator<Item = &'r [Value]>,
    o: &CopyOptions,
    zone: snapscale_values::Style,
) -> Result<Output, SqlError> {
    let types: Vec<SqlType> = columns.iter().map(|c| c.ty).collect();
    let mut lines = Vec::new();
    match o.format {
        CopyFormat::Binary => lines.push(binary::header()),
        CopyFormat::Csv if o.header => {
            lines.push(csv::format_header(&columns.iter().map(|c| c.name.clone()).collect::<Vec<_>>(), o))
        }
        _ => {}
    }
    let mut n = 0;
    for row in rows {
        n += 1;
        if o.format != CopyFormat::Binary {
            row.iter().try_for_each(|v| v.check_text(zone))?;
        }
        lines.push(match o.format {
            CopyFormat::Text => text::format_row(row, o, zone),
            CopyFormat::Csv => csv::format_row(row, o, zone),
            CopyFormat::Binary => binary::format_row(row, &types),
        });
    }
    if o.format == CopyFormat::Binary {
        lines.push(binary::trailer());
    }
    Ok(Output::CopyOut {
        columns: columns.len(),
        lines,
        tag: format!("COPY {n}"),
        binary: o.format == CopyFormat::Binary,
    })
}

impl Executor<'_> {
    /// COPY table … TO STDOUT: every visible row.
    pub(crate) fn copy_to(
        &mut self,
        rel: &Rel,
        columns: &[usize],
        o: &CopyOptions,
    ) -> Result<Output, SqlError> {
        let snapshot = self.xact.statement_snapshot()?;
        let rows: Vec<(Tid, Row)> = rel.scan(&self.xact.session.reader(&snapshot));
        let cols: Vec<Column> = columns
            .iter()
            .map(|&c| Column { name: rel.entry.columns[c].name.clone(), ty: rel.entry.columns[c].ty })
            .collect();
        // Every column in order (COPY t TO …): the rows as they are, not
        // a copy of each value.
        if columns.iter().copied().eq(0..rel.entry.columns.len()) {
            return copy_out(
                &cols,
                rows.iter().map(|(_, row)| &row[..columns.len()]),
                o,
                self.xact.session_style(),
            );
        }
        let picked: Vec<Vec<Value>> =
            rows.iter().map(|(_, row)| columns.iter().map(|&c| row[c].clone()).collect()).collect();
        copy_out(&cols, picked.iter().map(Vec::as_slice), o, self.xact.session_style())
    }

    /// Inserts the whole rows buffered in `copy` (and, `at_end`, checks
    /// that nothing is left unfinished), firing the table's INSERT
    /// statement triggers as an INSERT does: BEFORE ones before the first
    /// row, AFTER ones once the data ended.
    pub(crate) async fn copy_lines(&mut self, copy: &mut CopyIn, at_end: bool) -> Result<(), SqlError> {
        use snapscale_engine::triggers::{events, TriggerTiming};
        if !copy.before_fired {
            copy.before_fired = true;
            self.statement_triggers(&copy.rel, TriggerTiming::Before, events::INSERT, None).await?;
        }
        self.captured = std::mem::take(&mut copy.captured);
        let copied = self.copy_rows(copy, at_end).await;
        copy.captured = std::mem::take(&mut self.captured);
        copied?;
        if at_end {
            self.captured = std::mem::take(&mut copy.captured);
            self.statement_triggers(&copy.rel, TriggerTiming::After, events::INSERT, None).await?;
        }
        Ok(())
    }

    async fn copy_rows(&mut self, copy: &mut CopyIn, at_end: bool) -> Result<(), SqlError> {
        loop {
            if copy.ended {
                copy.pending.clear();
                return Ok(());
            }
            let fields: Vec<Value> = match copy.options.format {
                CopyFormat::Binary => match binary::next(&copy.pending, copy.started, &copy.types)? {
                    binary::Next::More if at_end && !copy.pending.is_empty() => {
                        return Err(SqlError::new(
                            SqlState::BAD_COPY_FILE_FORMAT,
                            "unexpected EOF in COPY data",
                        ))
                    }
                    binary::Next::More => return Ok(()),
                    binary::Next::Header(n) => {
                        copy.pending.drain(..n);
                        copy.started = true;
                        continue;
                    }
                    binary::Next::End(n) => {
                        copy.pending.drain(..n);
                        copy.ended = true;
                        continue;
                    }
                    binary::Next::Row(n, values) => {
                        copy.pending.drain(..n);
                        copy.line += 1;
                        values
                    }
                },
                CopyFormat::Text | CopyFormat::Csv => {
                    let end = match copy.options.format {
                        CopyFormat::Csv => csv::record_end(&copy.pending, &copy.options),
                        _ => copy.pending.iter().position(|&b| b == b'\n'),
                    };
                    let line: Vec<u8> = match end {
                        Some(end) => {
                            let mut line: Vec<u8> = copy.pending.drain(..=end).collect();
                            line.pop();
                            if line.last() == Some(&b'\r') {
                                line.pop();
                            }
                            line
                        }
                        None if at_end && !copy.pending.is_empty() => std::mem::take(&mut copy.pending),
                        None => return Ok(()),
                    };
                    copy.line += 1;
                    if line == b"\\." {
                        copy.ended = true;
                        continue;
                    }
                    if !copy.started {
                        // The CSV header line.
                        copy.started = true;
                        continue;
                    }
                    let text = String::from_utf8(line).map_err(|_| {
                        SqlError::new(
                            SqlState::CHARACTER_NOT_IN_REPERTOIRE,
                            "invalid byte sequence for encoding \"UTF8\"",
                        )
                    })?;
                    let raw = match copy.options.format {
                        CopyFormat::Csv => csv::parse_record(&text, &copy.options),
                        _ => text::parse_line(&text, &copy.options),
                    }
                    .map_err(|e| copy.context(e))?;
                    copy.parse(raw)?
                }
            };
            let (line_no, rel) = (copy.line, &copy.rel);
            let context = |e: SqlError| {
                let message = format!("{} (COPY {}, line {line_no})", e.message, rel.entry.name);
                SqlError::from(snapscale_values::ErrorData { message, ..e.into_data() })
            };
            let mut row = vec![Value::Null; rel.entry.columns.len()];
            for (&c, v) in copy.columns.iter().zip(fields) {
                row[c] = v;
            }
            if !copy.defaults.is_empty() {
                let defaults = &copy.defaults;
                let values = self
                    .evaluate(|ex| {
                        let cx = ex.ctx(&[]);
                        defaults
                            .iter()
                            .map(|(c, e)| Ok((*c, e.eval(&cx)?)))
                            .collect::<Result<Vec<_>, SqlError>>()
                    })
                    .await
                    .map_err(context)?;
                for (c, v) in values {
                    row[c] = v;
                }
            }
            if !copy.checks.is_empty() {
                let checks = &copy.checks;
                self.evaluate(|ex| {
                    let cx = ex.ctx(&row);
                    checks.iter().try_for_each(|e| e.eval(&cx).map(drop))
                })
                .await
                .map_err(context)?;
            }
            self.ri = super::ri::Ri::new(std::sync::Arc::clone(&copy.foreign_keys));
            let inserted = self.insert_row(rel, Row::from(row), &copy.table_checks).await.map_err(context)?;
            self.ri_finish().await.map_err(context)?;
            self.fire_after_rows().await.map_err(context)?;
            copy.rows += u64::from(inserted.is_some());
        }
    }
}

impl CopyIn {
    /// A field read as column `c` of type `ty`, held to its type modifier
    /// (an interval's qualifier decides what a bare number means).
    fn read_field(&self, ty: SqlType, f: &str, c: usize) -> Result<Value, SqlError> {
        let Some(typmod) = self.rel.entry.columns[c].typmod else { return Value::parse_in(ty, f, self.zone) };
        let v = match ty {
            SqlType::Array(elem) => {
                let v = Value::parse_in(ty, f, self.zone)?;
                return snapscale_values::adjust_array_typmod(v, elem, typmod);
            }
            SqlType::Interval => Value::Interval(snapscale_values::parse_interval_qualified(
                f,
                &self.zone,
                snapscale_values::interval_range::of(typmod),
            )?),
            _ => Value::parse_in(ty, f, self.zone)?,
        };
        snapscale_values::adjust_typmod(v, typmod)
    }

    /// The error with the line it is about, as PostgreSQL's COPY context.
    fn context(&self, e: SqlError) -> SqlError {
        let message = format!("{} (COPY {}, line {})", e.message, self.rel.entry.name, self.line);
        SqlError::from(snapscale_values::ErrorData { message, ..e.into_data() })
    }

    /// A text or CSV row's fields as the columns' values.
    fn parse(&self, fields: Vec<Option<String>>) -> Result<Vec<Value>, SqlError> {
        if fields.len() > self.columns.len() {
            return Err(self.context(SqlError::new(
                SqlState::BAD_COPY_FILE_FORMAT,
                "extra data after last expected column",
            )));
        }
        if fields.len() < self.columns.len() {
            let missing = &self.rel.entry.columns[self.columns[fields.len()]].name;
            return Err(self.context(SqlError::new(
                SqlState::BAD_COPY_FILE_FORMAT,
                format!("missing data for column \"{missing}\""),
            )));
        }
        fields
            .into_iter()
            .zip(&self.types)
            .enumerate()
            .map(|(i, (f, ty))| match (f, self.enums.get(i).and_then(Option::as_ref)) {
                (None, _) => Ok(Value::Null),
                (Some(f), Some(labels)) => labels.read(&f).map_err(|e| self.context(e)),
                (Some(f), None) => self.read_field(*ty, &f, self.columns[i]).map_err(|e| self.context(e)),
            })
            .collect()
    }
}
