//! Binding DDL: CREATE TABLE, ALTER TABLE ADD PRIMARY KEY/UNIQUE, CREATE INDEX, and the
//! column types they name.

use snapscale_lock::LockMode;
use sqlparser::ast::{self, CharacterLength, DataType, ExactNumberInfo, TableConstraint};

use super::*;
use crate::catalog::ColumnDef;
use crate::error::SqlError;
use crate::plan::{CreateTable, NewIndex, Plan, Rel, Utility};
use crate::sqlstate::SqlState;
use crate::types::SqlType;

impl<R: Resolver> Binder<'_, R> {
    pub(super) fn create_table(&mut self, c: &ast::CreateTable) -> Result<Plan, SqlError> {
        if c.query.is_some() {
            return Err(not_supported("CREATE TABLE AS"));
        }
        refuse_unsupported_clauses(c)?;
        let name = relation_name(&c.name)?;
        let mut columns: Vec<ColumnDef> = Vec::new();
        let mut indexes = Vec::new();
        for col in &c.columns {
            let cname = ident(&col.name);
            if columns.iter().any(|c| c.name == cname) {
                return Err(SqlError::new(
                    SqlState::DUPLICATE_COLUMN,
                    format!("column \"{cname}\" specified more than once"),
                ));
            }
            let ty = data_type(&col.data_type)?;
            let mut not_null = false;
            let mut default = None;
            for opt in &col.options {
                match &opt.option {
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
                    ast::ColumnOption::PrimaryKey(_) => {
                        not_null = true;
                        indexes.push((vec![cname.clone()], true, true));
                    }
                    ast::ColumnOption::Unique(_) => indexes.push((vec![cname.clone()], true, false)),
                    other => return Err(not_supported(format!("column option {other}"))),
                }
            }
            columns.push(ColumnDef { name: cname, ty, not_null, default });
        }
        for constraint in &c.constraints {
            match constraint {
                TableConstraint::PrimaryKey(pk) => {
                    indexes.push((index_columns(&pk.columns)?, true, true));
                }
                TableConstraint::Unique(u) => indexes.push((index_columns(&u.columns)?, true, false)),
                other => return Err(not_supported(format!("constraint {other}"))),
            }
        }
        let mut new_indexes = Vec::new();
        for (names, unique, primary) in indexes {
            if primary && new_indexes.iter().any(|i: &NewIndex| i.primary) {
                return Err(SqlError::new(
                    SqlState::INVALID_TABLE_DEFINITION,
                    format!("multiple primary keys for table \"{name}\" are not allowed"),
                ));
            }
            let mut positions = Vec::new();
            for n in &names {
                let p = columns.iter().position(|c| &c.name == n).ok_or_else(|| {
                    SqlError::new(
                        SqlState::UNDEFINED_COLUMN,
                        format!("column \"{n}\" named in key does not exist"),
                    )
                })?;
                if primary {
                    columns[p].not_null = true;
                }
                positions.push(p);
            }
            let index_name = index_name(&name, &names, primary, unique);
            new_indexes.push(NewIndex { name: index_name, columns: positions, unique, primary });
        }
        Ok(Plan::Utility(Utility::CreateTable(CreateTable {
            name,
            temp: c.temporary,
            if_not_exists: c.if_not_exists,
            columns,
            indexes: new_indexes,
        })))
    }

    /// A column's DEFAULT: bound now (no column references, the column's
    /// type by assignment), kept as its SQL text.
    pub(super) fn check_default(
        &mut self,
        e: &ast::Expr,
        column: &str,
        ty: SqlType,
    ) -> Result<String, SqlError> {
        let scope = Scope { rel: None };
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
        if !self.params.is_empty() {
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

    pub(super) fn alter_table(&mut self, a: &ast::AlterTable) -> Result<Plan, SqlError> {
        let [ast::AlterTableOperation::AddConstraint { constraint, .. }] = a.operations.as_slice() else {
            return Err(not_supported("this form of ALTER TABLE"));
        };
        let rel = self.rel(&a.name, LockMode::AccessExclusive)?;
        let (names, primary, given) = match constraint {
            TableConstraint::PrimaryKey(pk) => (index_columns(&pk.columns)?, true, pk.name.as_ref()),
            TableConstraint::Unique(u) => (index_columns(&u.columns)?, false, u.name.as_ref()),
            other => return Err(not_supported(format!("ALTER TABLE ADD {other}"))),
        };
        let columns = key_positions(&rel, &names)?;
        let name = given.map(ident).unwrap_or_else(|| index_name(&rel.entry.name, &names, primary, true));
        Ok(Plan::Utility(Utility::AddIndex {
            rel,
            index: NewIndex { name, columns, unique: true, primary },
            if_not_exists: false,
            tag: "ALTER TABLE",
        }))
    }

    pub(super) fn create_index(&mut self, c: &ast::CreateIndex) -> Result<Plan, SqlError> {
        if c.predicate.is_some() || !c.include.is_empty() || c.concurrently {
            return Err(not_supported("this form of CREATE INDEX"));
        }
        let rel = self.rel(&c.table_name, LockMode::Share)?;
        let names = index_columns(&c.columns)?;
        let columns = key_positions(&rel, &names)?;
        let name = match &c.name {
            Some(n) => relation_name(n)?,
            None => index_name(&rel.entry.name, &names, false, false),
        };
        Ok(Plan::Utility(Utility::AddIndex {
            rel,
            index: NewIndex { name, columns, unique: c.unique, primary: false },
            if_not_exists: c.if_not_exists,
            tag: "CREATE INDEX",
        }))
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
    if primary {
        format!("{table}_pkey")
    } else if unique {
        format!("{table}_{}_key", columns.join("_"))
    } else {
        format!("{table}_{}_idx", columns.join("_"))
    }
}

/// A column type as written in DDL or a cast.
/// Clauses of CREATE TABLE that snapscale does not implement answer 0A000
/// instead of being parsed and dropped: a table created without its
/// partitioning, parent or options would pretend. UNLOGGED is accepted (the
/// table is logged: more durable than asked, answers the same) and so is
/// GLOBAL (PostgreSQL treats GLOBAL TEMPORARY as TEMPORARY).
fn refuse_unsupported_clauses(c: &ast::CreateTable) -> Result<(), SqlError> {
    let clause = if c.partition_by.is_some() {
        "PARTITION BY"
    } else if c.partition_of.is_some() || c.for_values.is_some() {
        "PARTITION OF"
    } else if c.inherits.is_some() {
        "INHERITS"
    } else if c.like.is_some() {
        "LIKE"
    } else if c.clone.is_some() {
        "CLONE"
    } else if let Some(clause) = unsupported_table_options(&c.table_options)? {
        clause
    } else if c.comment.is_some() {
        "COMMENT"
    } else if c.order_by.is_some() || c.cluster_by.is_some() || c.clustered_by.is_some() {
        "ORDER BY / CLUSTER BY"
    } else {
        match (&c.on_commit, c.temporary) {
            (None | Some(ast::OnCommit::PreserveRows), _) => return Ok(()),
            (Some(_), false) => {
                return Err(SqlError::new(
                    SqlState::INVALID_TABLE_DEFINITION,
                    "ON COMMIT can only be used on temporary tables",
                ))
            }
            (Some(ast::OnCommit::DeleteRows), true) => "ON COMMIT DELETE ROWS",
            (Some(ast::OnCommit::Drop), true) => "ON COMMIT DROP",
        }
    };
    Err(not_supported(format!("CREATE TABLE ... {clause}")))
}

/// `WITH (fillfactor = n)` (what pgbench -i writes) is a storage hint
/// with no effect on answers: checked as PostgreSQL checks it, then
/// accepted (snapscale's heaps have no pages to leave room in). Other
/// storage parameters and option forms are refused.
fn unsupported_table_options(options: &ast::CreateTableOptions) -> Result<Option<&'static str>, SqlError> {
    let list = match options {
        ast::CreateTableOptions::None => return Ok(None),
        ast::CreateTableOptions::With(list) => list,
        _ => return Ok(Some("table options")),
    };
    for option in list {
        let ast::SqlOption::KeyValue { key, value } = option else { return Ok(Some("WITH options")) };
        if !key.value.eq_ignore_ascii_case("fillfactor") {
            return Ok(Some("storage parameters other than fillfactor"));
        }
        let n = match value {
            ast::Expr::Value(v) => match &v.value {
                ast::Value::Number(n, _) => n.parse::<i64>().ok(),
                ast::Value::SingleQuotedString(s) => s.trim().parse::<i64>().ok(),
                _ => None,
            },
            _ => None,
        };
        match n {
            Some(10..=100) => {}
            Some(n) => {
                return Err(SqlError::new(
                    SqlState::INVALID_PARAMETER_VALUE,
                    format!("value {n} out of bounds for option \"fillfactor\""),
                )
                .with_detail("Valid values are between \"10\" and \"100\"."))
            }
            None => {
                return Err(SqlError::new(
                    SqlState::INVALID_PARAMETER_VALUE,
                    format!("invalid value for integer option \"fillfactor\": {value}"),
                ))
            }
        }
    }
    Ok(None)
}

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
        DataType::Float(_) => SqlType::Float8,
        DataType::Boolean | DataType::Bool => SqlType::Bool,
        DataType::Text | DataType::String(_) => SqlType::Text,
        DataType::Varchar(l) | DataType::CharacterVarying(l) => SqlType::Varchar(length(l)?),
        DataType::Char(l) | DataType::Character(l) => SqlType::Char(length(l)?.unwrap_or(1)),
        DataType::Date => SqlType::Date,
        DataType::Timestamp(None, ast::TimezoneInfo::None | ast::TimezoneInfo::WithoutTimeZone) => {
            SqlType::Timestamp
        }
        DataType::Interval { fields: None, precision: None } => SqlType::Interval,
        DataType::Numeric(_) | DataType::Decimal(_) | DataType::Dec(_) => {
            let _ = ExactNumberInfo::None;
            return Err(SqlError::new(SqlState::FEATURE_NOT_SUPPORTED, "type numeric is not supported yet"));
        }
        DataType::Custom(name, _) => {
            let n = name.to_string().to_lowercase();
            SqlType::from_name(&n, None)?
        }
        other => {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                format!("type {other} is not supported"),
            ))
        }
    })
}
