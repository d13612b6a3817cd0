//! Binding DDL: CREATE TABLE, ALTER TABLE ADD PRIMARY KEY/UNIQUE, CREATE INDEX, and the
//! column types they name.

use snapscale_engine::catalog::{ColumnDef, Identity};
use snapscale_engine::user_types::CheckDef;
use snapscale_sqlstate::SqlState;
use snapscale_values::numeric::numeric_typmod_in;
use snapscale_values::{SqlError, SqlType};
use sqlparser::ast::{self, CharacterLength, DataType, ExactNumberInfo, TableConstraint};

use super::index_ddl::IndexSpec;
use super::scope::Scope;
use super::{ident, not_supported, relation_name, Binder, Coercion, Resolver};
use crate::plan::{CreateTable, NewIndex, Plan, Rel, Utility};

impl<R: Resolver> Binder<'_, R> {
    pub(super) fn create_table(&mut self, c: &ast::CreateTable) -> Result<Plan, SqlError> {
        super::clauses::create_table(c)?;
        check_table_options(&c.table_options)?;
        let params = self.statement.pre.storage_params.take().unwrap_or_default();
        let options = super::reloptions::create_heap(&params, true)?;
        if let Some(query) = &c.query {
            return self.create_table_as(c, query, options);
        }
        let name = relation_name(&c.name)?;
        if let Err(e) = self.resolver.check_creation(&name, c.temporary) {
            return Err(self.at_name(e, &c.name));
        }
        if c.columns.len() > crate::limits::MAX_TABLE_COLUMNS {
            return Err(SqlError::new(
                SqlState::TOO_MANY_COLUMNS,
                format!("tables can have at most {} columns", crate::limits::MAX_TABLE_COLUMNS),
            ));
        }
        let mut columns: Vec<ColumnDef> = Vec::new();
        let mut indexes = Vec::new();
        let mut serials = Vec::new();
        // CHECK constraints as written, named or not: bound once every
        // column is known.
        let mut checks: Vec<(Option<String>, &ast::CheckConstraint)> = Vec::new();
        let mut references: Vec<(Option<String>, &ast::ForeignKeyConstraint)> = Vec::new();
        // LIKE elements: their columns go where they were written.
        let likes = self.statement.pre.table_likes.take().unwrap_or_default();
        let mut copied = Vec::new();
        for like in &likes {
            copied.push((like.position, self.table_like(like, &name, &mut serials)?));
        }
        let mut copied_checks = Vec::new();
        let mut copied_constraints = Vec::new();
        let mut copied_indexes = Vec::new();
        let mut place_copies = |at: usize, columns: &mut Vec<ColumnDef>| -> Result<(), SqlError> {
            for (_, copy) in copied.iter_mut().filter(|(p, _)| *p == at) {
                for def in std::mem::take(&mut copy.columns) {
                    if columns.iter().any(|c| c.name == def.name) {
                        return Err(duplicate_column(&def.name));
                    }
                    columns.push(def);
                }
                copied_checks.append(&mut copy.checks);
                copied_constraints.append(&mut copy.constraints);
                copied_indexes.append(&mut copy.indexes);
            }
            Ok(())
        };
        for (at, col) in c.columns.iter().enumerate() {
            place_copies(at, &mut columns)?;
            let cname = ident(&col.name);
            if columns.iter().any(|c| c.name == cname) {
                return Err(duplicate_column(&cname));
            }
            let spec = self.column_def(&name, col, &mut serials)?;
            indexes.extend(spec.indexes);
            checks.extend(spec.checks);
            references.extend(spec.foreign_keys.into_iter().map(|fk| (Some(spec.def.name.clone()), fk)));
            columns.push(spec.def);
        }
        place_copies(c.columns.len(), &mut columns)?;
        indexes.append(&mut copied_constraints);
        for constraint in &c.constraints {
            match constraint {
                TableConstraint::PrimaryKey(pk) => indexes.push(IndexSpec::primary_key(pk)?),
                TableConstraint::Unique(u) => indexes.push(IndexSpec::unique(u)?),
                TableConstraint::Check(check) => checks.push((check.name.as_ref().map(ident), check)),
                TableConstraint::ForeignKey(fk) => references.push((None, fk)),
                other => return Err(not_supported(format!("constraint {other}"))),
            }
        }
        let mut new_indexes = Vec::new();
        for spec in indexes {
            if spec.primary && new_indexes.iter().any(|i: &NewIndex| i.primary) {
                return Err(SqlError::new(
                    SqlState::INVALID_TABLE_DEFINITION,
                    format!("multiple primary keys for table \"{name}\" are not allowed"),
                ));
            }
            let index = spec.resolve(&name, |n| columns.iter().position(|c| c.name == n))?;
            if index.primary {
                for &p in &index.columns {
                    columns[p].not_null = true;
                }
            }
            new_indexes.push(index);
        }
        for index in copied_indexes {
            let taken: Vec<String> = new_indexes.iter().map(|i| i.name.clone()).collect();
            let position = |n: &str| columns.iter().position(|c| c.name == n);
            new_indexes.extend(super::table_like::copied_index(&name, index, position, &taken));
        }
        // PostgreSQL makes the primary key's index first (its oid is the
        // lowest), the others in the order written.
        new_indexes.sort_by_key(|i| !i.primary);
        // Generation expressions, bound to refuse what one may not hold.
        for i in 0..columns.len() {
            if columns[i].generated.is_some() {
                self.generation_expr(&columns, i)?;
            }
        }
        let mut defs: Vec<CheckDef> = copied_checks;
        for (given, check) in checks {
            defs.push(self.new_check(&name, &columns, given, check, &defs, &[])?);
        }
        let mut foreign_keys: Vec<snapscale_engine::catalog::ForeignKeyDef> = Vec::new();
        for (column, fk) in references {
            let mut taken: Vec<String> = defs.iter().map(|c| c.name.clone()).collect();
            taken.extend(new_indexes.iter().map(|i| i.name.clone()));
            taken.extend(foreign_keys.iter().map(|f| f.name.clone()));
            let own: Vec<super::foreign_keys::UniqueKey> = new_indexes
                .iter()
                .filter(|i| i.unique && i.exprs.is_empty() && i.predicate.is_none())
                .map(|i| (i.columns.clone(), i.primary))
                .collect();
            let (def, _) =
                self.foreign_key_def(&name, None, &columns, column.as_deref(), fk, &taken, &own)?;
            foreign_keys.push(def);
        }
        Ok(Plan::Utility(Utility::CreateTable(CreateTable {
            name,
            checks: defs,
            foreign_keys,
            global: c.global == Some(true),
            temp: c.temporary,
            if_not_exists: c.if_not_exists,
            columns,
            indexes: new_indexes,
            sequence: None,
            serials,
            view: None,
            options,
        })))
    }

    /// A column definition of table `name` (CREATE TABLE, ALTER TABLE …
    /// ADD COLUMN), with the constraints written on it; a SERIAL or
    /// identity column's sequence goes to `serials`.
    pub(super) fn column_def<'c>(
        &mut self,
        name: &str,
        col: &'c ast::ColumnDef,
        serials: &mut Vec<crate::plan::Serial>,
    ) -> Result<ColumnSpec<'c>, SqlError> {
        let cname = ident(&col.name);
        let mut indexes = Vec::new();
        let mut checks = Vec::new();
        let mut foreign_keys = Vec::new();
        let serial = super::sequence::serial_type(&col.data_type);
        let (ty, domain) = match serial {
            Some(t) => (t, None),
            None => self.resolve_type_with_domain(&col.data_type)?,
        };
        if !ty.storable() {
            return Err(not_supported(format!("a column of type {}", ty.name())));
        }
        let mut not_null = serial.is_some();
        // NULL or NOT NULL as written: both is a contradiction.
        let mut nullability = None;
        let mut default = match serial {
            Some(_) => Some(self.serial(name, &cname, ty, &[], serials)?),
            None => None,
        };
        let mut generated: Option<String> = None;
        let mut identity: Option<Identity> = None;
        for opt in &col.options {
            // A constraint's name names its index (PRIMARY KEY,
            // UNIQUE); PostgreSQL 15 keeps no name for NOT NULL, NULL
            // or DEFAULT, and neither does snapscale.
            let ast::ColumnOptionDef { name: constraint_name, option } = opt;
            let constraint_name = constraint_name.as_ref().map(ident);
            if matches!(option, ast::ColumnOption::Null | ast::ColumnOption::NotNull) {
                let null = matches!(option, ast::ColumnOption::Null);
                if nullability.is_some_and(|n| n != null) {
                    return Err(SqlError::new(
                        SqlState::SYNTAX_ERROR,
                        format!("conflicting NULL/NOT NULL declarations for column \"{cname}\" of table \"{name}\""),
                    ));
                }
                nullability = Some(null);
            }
            match option {
                ast::ColumnOption::Null => {}
                ast::ColumnOption::NotNull => not_null = true,
                ast::ColumnOption::Default(e) => {
                    if default.is_some() {
                        return Err(SqlError::new(
                            SqlState::SYNTAX_ERROR,
                            format!(
                                "multiple default values specified for column \"{cname}\" of table \"{name}\""
                            ),
                        ));
                    }
                    default = Some(self.check_default(e, &cname, ty)?);
                }
                ast::ColumnOption::Generated {
                    generated_as: kind @ (ast::GeneratedAs::ByDefault | ast::GeneratedAs::Always),
                    sequence_options,
                    generation_expr: None,
                    ..
                } => {
                    if identity.is_some() {
                        return Err(SqlError::new(
                            SqlState::SYNTAX_ERROR,
                            format!(
                                "multiple identity specifications for column \"{cname}\" of table \"{name}\""
                            ),
                        ));
                    }
                    identity = Some(match kind {
                        ast::GeneratedAs::Always => Identity::Always,
                        _ => Identity::ByDefault,
                    });
                    if default.is_some() {
                        return Err(SqlError::new(
                            SqlState::SYNTAX_ERROR,
                            format!(
                                "both default and identity specified for column \"{cname}\" of table \"{name}\""
                            ),
                        ));
                    }
                    if !matches!(ty, SqlType::Int2 | SqlType::Int4 | SqlType::Int8) {
                        return Err(SqlError::new(
                            SqlState::INVALID_PARAMETER_VALUE,
                            "identity column type must be smallint, integer, or bigint",
                        ));
                    }
                    let options = sequence_options.as_deref().unwrap_or_default();
                    default = Some(self.serial(name, &cname, ty, options, serials)?);
                    not_null = true;
                }
                ast::ColumnOption::PrimaryKey(pk) => {
                    not_null = true;
                    let spec = IndexSpec::primary_key(pk)?;
                    indexes.push(IndexSpec { columns: vec![cname.clone()], name: constraint_name, ..spec });
                }
                ast::ColumnOption::Unique(u) => {
                    let spec = IndexSpec::unique(u)?;
                    indexes.push(IndexSpec { columns: vec![cname.clone()], name: constraint_name, ..spec });
                }
                ast::ColumnOption::Collation(collation) => check_column_collation(collation, ty)?,
                ast::ColumnOption::Check(check) => {
                    checks.push((constraint_name.or_else(|| check.name.as_ref().map(ident)), check))
                }
                ast::ColumnOption::ForeignKey(fk) => foreign_keys.push(fk),
                ast::ColumnOption::Generated { generation_expr: Some(e), generation_expr_mode, .. } => {
                    if !matches!(generation_expr_mode, Some(ast::GeneratedExpressionMode::Stored)) {
                        return Err(SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at or near \")\""));
                    }
                    if generated.is_some() {
                        return Err(SqlError::new(
                            SqlState::SYNTAX_ERROR,
                            format!("multiple generation clauses specified for column \"{cname}\" of table \"{name}\""),
                        ));
                    }
                    // Bound once every column is known (generated.rs).
                    generated = Some(e.to_string());
                }
                other => return Err(not_supported(format!("column option {other}"))),
            }
        }
        if generated.is_some() && default.is_some() {
            return Err(SqlError::new(
                SqlState::SYNTAX_ERROR,
                format!("both default and generation expression specified for column \"{cname}\" of table \"{name}\""),
            ));
        }
        // A domain's default is the column's when it has none of its
        // own: looked up when a row is inserted (`column_default`), so
        // that ALTER DOMAIN … SET DEFAULT reaches existing columns.
        Ok(ColumnSpec {
            def: ColumnDef {
                name: cname,
                ty,
                not_null,
                default,
                domain: domain.map(|d| d.oid),
                typmod: typmod_of(&col.data_type),
                generated,
                identity,
                missing: None,
                storage: None,
                stats_target: None,
            },
            indexes,
            checks,
            foreign_keys,
        })
    }

    /// A column's DEFAULT: bound now (no column references, the column's
    /// type by assignment), kept as its SQL text.
    pub(super) fn check_default(
        &mut self,
        e: &ast::Expr,
        column: &str,
        ty: SqlType,
    ) -> Result<String, SqlError> {
        let scope = Scope::empty();
        let typed = self.expr(e, &scope).map_err(|err| match err.code {
            SqlState::UNDEFINED_COLUMN => SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "cannot use column reference in DEFAULT expression",
            ),
            SqlState::GROUPING_ERROR => SqlError::new(
                SqlState::GROUPING_ERROR,
                "aggregate functions are not allowed in DEFAULT expressions",
            ),
            _ => err,
        })?;
        if !self.statement.params.is_empty() {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "cannot use parameters in a DEFAULT expression",
            ));
        }
        let from = typed.ty;
        match self.coerce(typed, ty, Coercion::Assignment, "") {
            Ok(_) => {}
            // A value that does not fit the column (a too long string, an
            // out-of-range number) fails when it is inserted, not here.
            Err(err)
                if err.code == SqlState::STRING_DATA_RIGHT_TRUNCATION_22001
                    || err.code == SqlState::NUMERIC_VALUE_OUT_OF_RANGE => {}
            Err(err) if err.code == SqlState::DATATYPE_MISMATCH || err.code == SqlState::CANNOT_COERCE => {
                return Err(SqlError::new(
                    SqlState::DATATYPE_MISMATCH,
                    format!(
                        "column \"{column}\" is of type {} but default expression is of type {}",
                        ty.name(),
                        from.map_or("unknown", SqlType::name)
                    ),
                )
                .with_hint("You will need to rewrite or cast the expression."))
            }
            Err(err) => return Err(err),
        }
        Ok(e.to_string())
    }

    // ---------------------------------------------------------------- DML
}

pub(super) fn index_columns(cols: &[ast::IndexColumn]) -> Result<Vec<String>, SqlError> {
    cols.iter()
        .map(|c| match &c.column.expr {
            ast::Expr::Identifier(i) => Ok(ident(i)),
            other => Err(not_supported(format!("index expression {other}"))),
        })
        .collect()
}

pub(super) fn key_positions(rel: &Rel, names: &[String]) -> Result<Vec<usize>, SqlError> {
    names
        .iter()
        .map(|n| {
            rel.entry.column(n).ok_or_else(|| {
                SqlError::new(SqlState::UNDEFINED_COLUMN, format!("column \"{n}\" does not exist"))
            })
        })
        .collect()
}

/// PostgreSQL's default names: t_pkey, t_a_key, t_a_idx.
pub(super) fn index_name(table: &str, columns: &[String], primary: bool, unique: bool) -> String {
    let columns = columns.join("_");
    if primary {
        object_name(table, None, "pkey")
    } else if unique {
        object_name(table, Some(&columns), "key")
    } else {
        object_name(table, Some(&columns), "idx")
    }
}

/// A name made of `name1`, `name2` and `label` joined by underscores, the
/// first two shortened (the longer one first, whole characters) so that
/// the whole fits in PostgreSQL's 63 bytes, as PostgreSQL names the
/// objects it creates for you.
pub(super) fn object_name(name1: &str, name2: Option<&str>, label: &str) -> String {
    // A table's key names it without its schema (REL-KEY).
    let name1 = &snapscale_engine::names::bare(name1);
    const MAX: usize = 63;
    let overhead = label.len() + 1 + name2.map_or(0, |_| 1);
    let avail = MAX.saturating_sub(overhead);
    let (mut n1, mut n2) = (name1.len(), name2.map_or(0, str::len));
    while n1 + n2 > avail {
        if n1 > n2 {
            n1 -= 1;
        } else {
            n2 -= 1;
        }
    }
    let clip = |s: &str, n: usize| {
        let mut n = n.min(s.len());
        while !s.is_char_boundary(n) {
            n -= 1;
        }
        s[..n].to_owned()
    };
    let mut out = clip(name1, n1);
    if let Some(n) = name2 {
        out.push('_');
        out.push_str(&clip(n, n2));
    }
    out.push('_');
    out.push_str(label);
    out
}

/// 42701 for a column named twice.
fn duplicate_column(name: &str) -> SqlError {
    SqlError::new(SqlState::DUPLICATE_COLUMN, format!("column \"{name}\" specified more than once"))
}

/// A column as declared, with the constraints written on it.
pub(super) struct ColumnSpec<'c> {
    pub def: ColumnDef,
    /// PRIMARY KEY / UNIQUE: (columns, unique, primary, given name).
    pub indexes: Vec<IndexSpec>,
    /// CHECK constraints: (given name, constraint).
    pub checks: Vec<(Option<String>, &'c ast::CheckConstraint)>,
    /// REFERENCES.
    pub foreign_keys: Vec<&'c ast::ForeignKeyConstraint>,
}

/// CREATE TABLE's options sqlparser read: `TABLESPACE pg_default` is where
/// every table lives; no other tablespace exists. Storage parameters are
/// the pre-parser's (reloptions_syntax.rs): a list it could not read is a
/// syntax error, as PostgreSQL's grammar has it.
fn check_table_options(options: &ast::CreateTableOptions) -> Result<(), SqlError> {
    let list = match options {
        ast::CreateTableOptions::None => return Ok(()),
        ast::CreateTableOptions::With(list) | ast::CreateTableOptions::Plain(list) => list,
        ast::CreateTableOptions::Options(_) | ast::CreateTableOptions::TableProperties(_) => {
            return Err(SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at or near \"OPTIONS\""))
        }
    };
    for option in list {
        match option {
            ast::SqlOption::KeyValue { value, .. } => {
                return Err(SqlError::new(
                    SqlState::SYNTAX_ERROR,
                    format!("syntax error at or near \"{value}\""),
                ))
            }
            ast::SqlOption::TableSpace(ast::TablespaceOption { name, storage: None }) => {
                if name != "pg_default" {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_OBJECT,
                        format!("tablespace \"{name}\" does not exist"),
                    ));
                }
            }
            other => return Err(not_supported(format!("CREATE TABLE ... {other}"))),
        }
    }
    Ok(())
}

/// A column's COLLATE: the collations that sort as bytes, as all text
/// here does (the database's collation is C, as PostgreSQL's with
/// --locale=C); pg_attribute records the default one. Only the string
/// types have collations.
fn check_column_collation(collation: &ast::ObjectName, ty: SqlType) -> Result<(), SqlError> {
    if !matches!(ty, SqlType::Text | SqlType::Varchar(_) | SqlType::Char(_) | SqlType::Name) {
        return Err(SqlError::new(
            SqlState::DATATYPE_MISMATCH,
            format!("collations are not supported by type {}", ty.name()),
        ));
    }
    let name = collation.0.last().and_then(|p| p.as_ident()).map(|i| i.value.clone()).unwrap_or_default();
    if !["default", "C", "POSIX", "ucs_basic"].contains(&name.as_str()) {
        return Err(SqlError::new(
            SqlState::UNDEFINED_OBJECT,
            format!("collation \"{name}\" for encoding \"UTF8\" does not exist"),
        ));
    }
    Ok(())
}

/// The type modifier a date/time type is written with, PostgreSQL's: the
/// fractional-second precision of `timestamp(2)` or `time(0)` (at most 6,
/// PostgreSQL's maximum, to which it reduces a larger one), an interval's
/// qualifier and precision (`interval day to minute`, `interval(3)`).
pub fn typmod_of(dt: &DataType) -> Option<i32> {
    let precision = |p: u64| p.min(6) as u8;
    match dt {
        DataType::Timestamp(Some(p), _) | DataType::Time(Some(p), _) => Some(i32::from(precision(*p))),
        // An array's modifier is its elements': char(n)[] and varchar(n)[]
        // hold their elements to n (PostgreSQL's n + 4).
        DataType::Array(
            ast::ArrayElemTypeDef::SquareBracket(inner, _)
            | ast::ArrayElemTypeDef::AngleBracket(inner)
            | ast::ArrayElemTypeDef::Qualified(inner, _),
        ) => match data_type(inner) {
            Ok(SqlType::Char(n) | SqlType::Varchar(Some(n))) => Some(n as i32 + 4),
            _ => typmod_of(inner),
        },
        DataType::Interval { fields: None, precision: None } => None,
        DataType::Interval { fields, precision: p } => {
            let range = fields.as_ref().map_or(snapscale_values::interval_range::FULL, interval_fields);
            Some(snapscale_values::interval_range::typmod(range, p.map(precision)))
        }
        _ => None,
    }
}

/// An interval qualifier as PostgreSQL's field bits.
pub(super) fn interval_fields(f: &ast::IntervalFields) -> u32 {
    use ast::IntervalFields as F;
    use snapscale_values::interval_range::{DAY, HOUR, MINUTE, MONTH, SECOND, YEAR};
    match f {
        F::Year => YEAR,
        F::Month => MONTH,
        F::Day => DAY,
        F::Hour => HOUR,
        F::Minute => MINUTE,
        F::Second => SECOND,
        F::YearToMonth => YEAR | MONTH,
        F::DayToHour => DAY | HOUR,
        F::DayToMinute => DAY | HOUR | MINUTE,
        F::DayToSecond => DAY | HOUR | MINUTE | SECOND,
        F::HourToMinute => HOUR | MINUTE,
        F::HourToSecond => HOUR | MINUTE | SECOND,
        F::MinuteToSecond => MINUTE | SECOND,
    }
}

/// A column type as written in DDL or a cast.
pub fn data_type(dt: &DataType) -> Result<SqlType, SqlError> {
    let length = |l: &Option<CharacterLength>| -> Result<Option<u32>, SqlError> {
        match l {
            None => Ok(None),
            Some(CharacterLength::IntegerLength { length, .. }) => {
                if *length == 0 {
                    return Err(SqlError::new(
                        SqlState::INVALID_PARAMETER_VALUE,
                        "length for type varchar must be at least 1",
                    ));
                }
                u32::try_from(*length).map(Some).map_err(|_| {
                    SqlError::new(
                        SqlState::INVALID_PARAMETER_VALUE,
                        "length for type varchar cannot exceed 10485760",
                    )
                })
            }
            Some(CharacterLength::Max) => Err(not_supported("varchar(max)")),
        }
    };
    Ok(match dt {
        DataType::SmallInt(_) | DataType::Int2(_) => SqlType::Int2,
        DataType::Int(_) | DataType::Integer(_) | DataType::Int4(_) => SqlType::Int4,
        DataType::BigInt(_) | DataType::Int8(_) => SqlType::Int8,
        DataType::DoublePrecision | DataType::Float8 | DataType::Double(_) => SqlType::Float8,
        DataType::Real | DataType::Float4 => SqlType::Float4,
        // float(p): real up to 24 bits of precision, as PostgreSQL maps it.
        DataType::Float(ExactNumberInfo::Precision(p)) if (1..=24).contains(p) => SqlType::Float4,
        DataType::Float(ExactNumberInfo::Precision(p)) if *p < 1 => {
            return Err(SqlError::new(
                SqlState::INVALID_PARAMETER_VALUE,
                "precision for type float must be at least 1 bit",
            ))
        }
        DataType::Float(ExactNumberInfo::Precision(p)) if *p > 53 => {
            return Err(SqlError::new(
                SqlState::INVALID_PARAMETER_VALUE,
                "precision for type float must be less than 54 bits",
            ))
        }
        DataType::Float(_) => SqlType::Float8,
        DataType::Boolean | DataType::Bool => SqlType::Bool,
        DataType::Text | DataType::String(_) => SqlType::Text,
        DataType::Varchar(l) | DataType::CharacterVarying(l) => SqlType::Varchar(length(l)?),
        DataType::Char(l) | DataType::Character(l) => SqlType::Char(length(l)?.unwrap_or(1)),
        DataType::Date => SqlType::Date,
        // A precision (`timestamp(2)`) is the column's or the cast's
        // (`typmod_of`); the type is the same.
        DataType::Timestamp(_, ast::TimezoneInfo::None | ast::TimezoneInfo::WithoutTimeZone) => {
            SqlType::Timestamp
        }
        DataType::Timestamp(_, ast::TimezoneInfo::WithTimeZone | ast::TimezoneInfo::Tz) => {
            SqlType::TimestampTz
        }
        DataType::Interval { .. } => SqlType::Interval,
        DataType::Time(_, ast::TimezoneInfo::None | ast::TimezoneInfo::WithoutTimeZone) => SqlType::Time,
        DataType::Time(_, ast::TimezoneInfo::WithTimeZone | ast::TimezoneInfo::Tz) => SqlType::TimeTz,
        DataType::Numeric(info) | DataType::Decimal(info) | DataType::Dec(info) => {
            // Checked as PostgreSQL's numerictypmodin checks it (22023).
            let int = |n: i64| i32::try_from(n).unwrap_or(if n < 0 { i32::MIN } else { i32::MAX });
            SqlType::Numeric(match *info {
                ExactNumberInfo::None => -1,
                ExactNumberInfo::Precision(p) => numeric_typmod_in(int(p as i64), None)?,
                ExactNumberInfo::PrecisionAndScale(p, s) => numeric_typmod_in(int(p as i64), Some(int(s)))?,
            })
        }
        DataType::Regclass => SqlType::Reg(snapscale_values::Reg::Class),
        DataType::Uuid => SqlType::Uuid,
        DataType::JSON => SqlType::Json,
        DataType::JSONB => SqlType::Jsonb,
        DataType::Bytea => SqlType::Bytea,
        // `int[][]`, `int[3]` and `int ARRAY[3]` are all int[]: the
        // dimensions written are not enforced, as in PostgreSQL.
        DataType::Array(
            ast::ArrayElemTypeDef::SquareBracket(inner, _)
            | ast::ArrayElemTypeDef::AngleBracket(inner)
            | ast::ArrayElemTypeDef::Qualified(inner, _),
        ) => {
            let elem = data_type(inner)?;
            if matches!(elem, SqlType::Array(_)) {
                return Ok(elem);
            }
            SqlType::Array(
                snapscale_values::Elem::of(elem)
                    .ok_or_else(|| not_supported(format!("arrays of {}", elem.name())))?,
            )
        }
        DataType::Custom(name, _) => {
            // pg_catalog.int4 is int4; a quoted "char" keeps its quotes.
            let parts: Vec<String> = name
                .0
                .iter()
                .filter_map(|p| p.as_ident())
                .map(|i| {
                    if i.quote_style.is_some() && i.value == "char" {
                        "\"char\"".to_owned()
                    } else {
                        i.value.to_lowercase()
                    }
                })
                .collect();
            match parts.as_slice() {
                [n] => SqlType::from_name(n, None)?,
                [schema, n] if schema == "pg_catalog" => SqlType::from_name(n, None)?,
                _ => {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_OBJECT,
                        format!("type \"{name}\" does not exist"),
                    ))
                }
            }
        }
        other => {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                format!("type {other} is not supported"),
            ))
        }
    })
}
