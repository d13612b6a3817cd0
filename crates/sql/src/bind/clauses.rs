//! No clause accepted and ignored: every clause sqlparser can hand the
//! binder is either implemented or refused here, before binding starts.
//!
//! sqlparser parses many dialects into one AST, so a PostgreSQL statement
//! arrives with dozens of fields the binder never reads: PARTITION BY,
//! INHERITS, DEFERRABLE, an index method, `DELETE … LIMIT`. A binder that
//! reads the fields it knows and drops the rest would answer such a
//! statement as if the clause were not there, which is pretending. So each
//! statement's AST is destructured here **without `..`**: every field is
//! named, and either checked to be absent, checked to hold what snapscale
//! implements, or marked as read by the binder proper. A sqlparser
//! upgrade that adds a field is a compile error in this module, not a
//! silent no-op.
//!
//! What a refusal says follows PostgreSQL: a clause PostgreSQL implements
//! and snapscale does not is 0A000 naming it; a clause PostgreSQL itself
//! rejects (another dialect's: `CREATE OR REPLACE TABLE`, `DELETE …
//! LIMIT`) gets PostgreSQL's own error, usually its syntax error at the
//! clause's keyword.

use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;
use sqlparser::ast::{self, TableFactor};

use super::not_supported;

/// PostgreSQL's syntax error at `token`, for a clause only another
/// dialect has.
fn syntax_error_at(token: &str) -> SqlError {
    SqlError::new(SqlState::SYNTAX_ERROR, format!("syntax error at or near \"{token}\""))
}

/// Refuses the first clause whose condition holds.
fn refuse(clauses: &[(bool, &str)]) -> Result<(), SqlError> {
    match clauses.iter().find(|(present, _)| *present) {
        Some((_, clause)) => Err(not_supported(clause)),
        None => Ok(()),
    }
}

/// CREATE TABLE. Read by the binder: the name, TEMP, IF NOT EXISTS, the
/// columns and constraints, `WITH (fillfactor)`, `TABLESPACE pg_default`,
/// ON COMMIT PRESERVE ROWS. UNLOGGED is accepted: the table is logged,
/// more durable than asked, with the same answers.
pub(super) fn create_table(c: &ast::CreateTable) -> Result<(), SqlError> {
    let ast::CreateTable {
        or_replace,
        temporary: _,
        unlogged: _,
        external,
        dynamic,
        global: _,
        if_not_exists: _,
        transient,
        volatile,
        iceberg,
        snapshot,
        name: _,
        columns: _,
        constraints: _,
        hive_distribution,
        hive_formats,
        table_options: _,
        file_format,
        location,
        query,
        without_rowid,
        like,
        clone,
        version,
        comment,
        on_commit,
        on_cluster,
        primary_key,
        order_by,
        partition_by,
        cluster_by,
        clustered_by,
        inherits,
        partition_of,
        for_values,
        strict,
        copy_grants,
        enable_schema_evolution,
        change_tracking,
        data_retention_time_in_days,
        max_data_extension_time_in_days,
        default_ddl_collation,
        with_aggregation_policy,
        with_row_access_policy,
        with_storage_lifecycle_policy,
        with_tags,
        external_volume,
        with_connection,
        base_location,
        catalog,
        catalog_sync,
        storage_serialization_policy,
        target_lag,
        warehouse,
        refresh_mode,
        initialize,
        require_user,
        diststyle,
        distkey,
        sortkey,
        backup,
        multiset,
        fallback,
        with_data,
    } = c;
    if *or_replace {
        return Err(syntax_error_at("TABLE"));
    }
    if *external || *dynamic || *transient || *volatile || *iceberg || *snapshot {
        return Err(syntax_error_at("TABLE"));
    }
    refuse(&[
        (
            query.is_some() && !c.columns.iter().all(|col| col.data_type == ast::DataType::Unspecified),
            "CREATE TABLE (column types) AS",
        ),
        (partition_by.is_some(), "CREATE TABLE ... PARTITION BY"),
        (partition_of.is_some() || for_values.is_some(), "CREATE TABLE ... PARTITION OF"),
        (inherits.is_some(), "CREATE TABLE ... INHERITS"),
        (like.is_some(), "CREATE TABLE ... LIKE"),
    ])?;
    // Every other dialect's clause: PostgreSQL has none of them.
    let foreign = [
        *hive_distribution != ast::HiveDistributionStyle::NONE,
        hive_formats.is_some(),
        file_format.is_some(),
        location.is_some(),
        *without_rowid,
        clone.is_some(),
        version.is_some(),
        comment.is_some(),
        on_cluster.is_some(),
        primary_key.is_some(),
        order_by.is_some(),
        cluster_by.is_some(),
        clustered_by.is_some(),
        *strict,
        *copy_grants,
        enable_schema_evolution.is_some(),
        change_tracking.is_some(),
        data_retention_time_in_days.is_some(),
        max_data_extension_time_in_days.is_some(),
        default_ddl_collation.is_some(),
        with_aggregation_policy.is_some(),
        with_row_access_policy.is_some(),
        with_storage_lifecycle_policy.is_some(),
        with_tags.is_some(),
        external_volume.is_some(),
        with_connection.is_some(),
        base_location.is_some(),
        catalog.is_some(),
        catalog_sync.is_some(),
        storage_serialization_policy.is_some(),
        target_lag.is_some(),
        warehouse.is_some(),
        refresh_mode.is_some(),
        initialize.is_some(),
        *require_user,
        diststyle.is_some(),
        distkey.is_some(),
        sortkey.is_some(),
        backup.is_some(),
        multiset.is_some(),
        fallback.is_some(),
        with_data.as_ref().is_some_and(|w| w.statistics.is_some()),
    ];
    if foreign.into_iter().any(|present| present) {
        return Err(not_supported("this CREATE TABLE clause (not PostgreSQL's)"));
    }
    match (on_commit, c.temporary) {
        (None | Some(ast::OnCommit::PreserveRows), _) => Ok(()),
        (Some(_), false) => Err(SqlError::new(
            SqlState::INVALID_TABLE_DEFINITION,
            "ON COMMIT can only be used on temporary tables",
        )),
        (Some(ast::OnCommit::DeleteRows), true) => {
            Err(not_supported("CREATE TABLE ... ON COMMIT DELETE ROWS"))
        }
        (Some(ast::OnCommit::Drop), true) => Err(not_supported("CREATE TABLE ... ON COMMIT DROP")),
    }
}

/// A PRIMARY KEY constraint, of a column or of the table: its name (read
/// by the binder) and columns; no INCLUDE, index options or DEFERRABLE.
pub(super) fn primary_key(pk: &ast::PrimaryKeyConstraint) -> Result<(), SqlError> {
    let ast::PrimaryKeyConstraint {
        name: _,
        index_name,
        index_type,
        columns,
        include,
        index_options,
        characteristics,
    } = pk;
    key_constraint(
        "PRIMARY KEY",
        index_name.is_some(),
        index_type.as_ref(),
        columns,
        include,
        index_options,
        characteristics.as_ref(),
    )
}

/// A UNIQUE constraint, of a column or of the table, as `primary_key`.
pub(super) fn unique(u: &ast::UniqueConstraint) -> Result<(), SqlError> {
    let ast::UniqueConstraint {
        name: _,
        index_name,
        index_type_display,
        index_type,
        columns,
        include,
        index_options,
        characteristics,
        nulls_distinct: _,
    } = u;
    if *index_type_display != ast::KeyOrIndexDisplay::None {
        return Err(syntax_error_at(&index_type_display.to_string()));
    }
    key_constraint(
        "UNIQUE",
        index_name.is_some(),
        index_type.as_ref(),
        columns,
        include,
        index_options,
        characteristics.as_ref(),
    )
}

fn key_constraint(
    kind: &str,
    index_name: bool,
    index_type: Option<&ast::IndexType>,
    columns: &[ast::IndexColumn],
    include: &[ast::Ident],
    index_options: &[ast::IndexOption],
    characteristics: Option<&ast::ConstraintCharacteristics>,
) -> Result<(), SqlError> {
    if index_name || index_type.is_some() || !index_options.is_empty() {
        // MySQL's `UNIQUE KEY name USING BTREE (…)`.
        return Err(syntax_error_at(kind));
    }
    if let Some(ast::ConstraintCharacteristics { deferrable, initially, enforced }) = characteristics {
        refuse(&[
            (*deferrable == Some(true) || initially.is_some(), "DEFERRABLE constraint"),
            (enforced.is_some(), "ENFORCED / NOT ENFORCED"),
        ])?;
    }
    // INCLUDE: any columns, read by the binder (`IndexSpec`).
    let _ = include;
    columns.iter().try_for_each(constraint_column)
}

/// One key column of a constraint: a plain column name (PostgreSQL's
/// grammar has no ordering or operator class there).
fn constraint_column(c: &ast::IndexColumn) -> Result<(), SqlError> {
    let ast::IndexColumn { column, operator_class } = c;
    let ast::OrderByExpr { expr: _, options, with_fill } = column;
    let ast::OrderByOptions { sort, nulls_first } = options;
    match (sort, nulls_first, operator_class, with_fill) {
        (None, None, None, None) => Ok(()),
        (Some(ast::OrderBySort::Asc), ..) => Err(syntax_error_at("ASC")),
        (Some(ast::OrderBySort::Desc), ..) => Err(syntax_error_at("DESC")),
        (Some(ast::OrderBySort::Using(_)), ..) => Err(syntax_error_at("USING")),
        (None, Some(_), ..) => Err(syntax_error_at("NULLS")),
        (None, None, Some(class), _) => Err(syntax_error_at(&class.to_string())),
        (None, None, None, Some(_)) => Err(syntax_error_at("WITH")),
    }
}

/// One key column of CREATE INDEX: its ordering and operator class are
/// read by the binder; USING an operator and WITH FILL are not
/// PostgreSQL's grammar.
fn index_column(c: &ast::IndexColumn) -> Result<(), SqlError> {
    // An operator class is the binder's (bind/index_keys.rs).
    let ast::IndexColumn { column, operator_class: _ } = c;
    let ast::OrderByExpr { expr: _, options, with_fill } = column;
    let ast::OrderByOptions { sort, nulls_first } = options;
    if with_fill.is_some() {
        return Err(syntax_error_at("WITH"));
    }
    if let Some(ast::OrderBySort::Using(_)) = sort {
        return Err(syntax_error_at("USING"));
    }
    // ASC / DESC and NULLS FIRST / LAST: the binder's (bind/index_keys.rs).
    let _ = nulls_first;
    Ok(())
}

/// CREATE INDEX: a btree index on columns and expressions.
pub(super) fn create_index(c: &ast::CreateIndex) -> Result<(), SqlError> {
    let ast::CreateIndex {
        name: _,
        table_name: _,
        using,
        columns,
        unique: _,
        concurrently,
        r#async,
        if_not_exists: _,
        include,
        nulls_distinct,
        with,
        predicate,
        index_options,
        alter_options,
    } = c;
    if *r#async || !index_options.is_empty() || !alter_options.is_empty() {
        return Err(syntax_error_at("INDEX"));
    }
    match using {
        None | Some(ast::IndexType::BTree) => {}
        Some(ast::IndexType::Custom(m)) if m.value.eq_ignore_ascii_case("btree") => {}
        Some(other) => {
            return Err(not_supported(format!(
                "index access method \"{}\"",
                other.to_string().to_lowercase()
            )))
        }
    }
    // CONCURRENTLY, INCLUDE, NULLS [NOT] DISTINCT and WHERE: read by the
    // binder.
    let _ = (concurrently, include, nulls_distinct, predicate);
    refuse(&[(!with.is_empty(), "CREATE INDEX ... WITH (storage parameters)")])?;
    columns.iter().try_for_each(index_column)
}

/// ALTER TABLE: the table and its IF EXISTS and ONLY (read by the binder;
/// ONLY changes nothing where nothing inherits); its actions are read by
/// `alter_table.rs`, which refuses each one it does not implement.
pub(super) fn alter_table(a: &ast::AlterTable) -> Result<(), SqlError> {
    let ast::AlterTable {
        name: _,
        if_exists: _,
        only: _,
        operations,
        location,
        on_cluster,
        table_type,
        end_token: _,
    } = a;
    if location.is_some() || on_cluster.is_some() || table_type.is_some() {
        return Err(syntax_error_at("TABLE"));
    }
    for op in operations {
        if let ast::AlterTableOperation::AddConstraint { constraint, not_valid } = op {
            match constraint {
                ast::TableConstraint::PrimaryKey(pk) => primary_key(pk)?,
                ast::TableConstraint::Unique(u) => unique(u)?,
                _ => {}
            }
            if *not_valid
                && !matches!(constraint, ast::TableConstraint::Check(_) | ast::TableConstraint::ForeignKey(_))
            {
                let kind = match constraint {
                    ast::TableConstraint::PrimaryKey(_) => "PRIMARY KEY",
                    ast::TableConstraint::Unique(_) => "UNIQUE",
                    _ => "these",
                };
                return Err(SqlError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    format!("{kind} constraints cannot be marked NOT VALID"),
                ));
            }
        }
    }
    Ok(())
}

/// TRUNCATE: the tables (ONLY changes nothing where nothing inherits),
/// CONTINUE IDENTITY (the default), CASCADE and RESTRICT (nothing
/// references a table, there being no foreign keys).
pub(super) fn truncate(t: &ast::Truncate) -> Result<(), SqlError> {
    let ast::Truncate { table_names, partitions, table: _, if_exists, identity, cascade: _, on_cluster } = t;
    if partitions.is_some() || *if_exists || on_cluster.is_some() {
        return Err(syntax_error_at("TRUNCATE"));
    }
    for target in table_names {
        let ast::TruncateTableTarget { name: _, only: _, has_asterisk: _ } = target;
    }
    refuse(&[(
        matches!(identity, Some(ast::TruncateIdentityOption::Restart)),
        "TRUNCATE ... RESTART IDENTITY",
    )])
}

/// INSERT: the table (and its alias), the columns, the rows (VALUES,
/// DEFAULT VALUES or a query) and RETURNING.
pub(super) fn insert(i: &ast::Insert) -> Result<(), SqlError> {
    let ast::Insert {
        insert_token: _,
        optimizer_hints,
        or,
        ignore,
        into,
        table: _,
        table_alias: _,
        columns: _,
        overwrite,
        source: _,
        assignments,
        partitioned,
        after_columns,
        has_table_keyword,
        on,
        returning: _,
        output,
        replace_into,
        priority,
        insert_alias,
        settings,
        format_clause,
        multi_table_insert_type,
        multi_table_into_clauses,
        multi_table_when_clauses,
        multi_table_else_clause,
    } = i;
    // ON CONFLICT is read by the binder (dml.rs); MySQL's ON DUPLICATE
    // KEY UPDATE is refused there.
    let _ = on;
    let foreign = [
        !optimizer_hints.is_empty(),
        or.is_some(),
        *ignore,
        !*into,
        *overwrite,
        !assignments.is_empty(),
        partitioned.is_some(),
        !after_columns.is_empty(),
        *has_table_keyword,
        output.is_some(),
        *replace_into,
        priority.is_some(),
        insert_alias.is_some(),
        settings.is_some(),
        format_clause.is_some(),
        multi_table_insert_type.is_some(),
        !multi_table_into_clauses.is_empty(),
        !multi_table_when_clauses.is_empty(),
        multi_table_else_clause.is_some(),
    ];
    if foreign.into_iter().any(|present| present) {
        return Err(syntax_error_at("INSERT"));
    }
    Ok(())
}

/// UPDATE: the table, SET, WHERE and RETURNING. `UPDATE … ORDER BY …
/// LIMIT` is MySQL's.
pub(super) fn update(u: &ast::Update) -> Result<(), SqlError> {
    let ast::Update {
        update_token: _,
        optimizer_hints,
        table: _,
        assignments: _,
        from,
        selection: _,
        returning: _,
        output,
        or,
        order_by,
        limit,
    } = u;
    // FROM is read by the binder (dml_join.rs).
    let _ = from;
    if !order_by.is_empty() {
        return Err(syntax_error_at("ORDER"));
    }
    if limit.is_some() {
        return Err(syntax_error_at("LIMIT"));
    }
    if !optimizer_hints.is_empty() || output.is_some() || or.is_some() {
        return Err(syntax_error_at("UPDATE"));
    }
    Ok(())
}

/// DELETE: the table, WHERE and RETURNING. `DELETE … ORDER BY … LIMIT` is
/// MySQL's.
pub(super) fn delete(d: &ast::Delete) -> Result<(), SqlError> {
    let ast::Delete {
        delete_token: _,
        optimizer_hints,
        tables,
        from: _,
        using,
        selection: _,
        returning: _,
        output,
        order_by,
        limit,
    } = d;
    // USING is read by the binder (dml_join.rs).
    let _ = using;
    if !order_by.is_empty() {
        return Err(syntax_error_at("ORDER"));
    }
    if limit.is_some() {
        return Err(syntax_error_at("LIMIT"));
    }
    if !optimizer_hints.is_empty() || output.is_some() || !tables.is_empty() {
        return Err(syntax_error_at("DELETE"));
    }
    Ok(())
}

/// A query's clauses around its body: WITH (`with.rs`), ORDER BY, LIMIT,
/// FOR UPDATE and FETCH FIRST … ONLY (as LIMIT) are the binder's; the
/// rest are other dialects'.
pub(super) fn query(q: &ast::Query) -> Result<(), SqlError> {
    let ast::Query {
        with,
        body: _,
        order_by,
        limit_clause: _,
        fetch,
        locks: _,
        for_clause,
        settings,
        format_clause,
        pipe_operators,
    } = q;
    if let Some(ast::Fetch { with_ties, percent, quantity: _ }) = fetch {
        refuse(&[(*with_ties, "FETCH FIRST ... WITH TIES"), (*percent, "FETCH FIRST ... PERCENT")])?;
    }
    if let Some(ast::With { with_token: _, recursive: _, cte_tables }) = with {
        for cte in cte_tables {
            // `with.rs` binds each reference to an item as a subquery of
            // its own, which is NOT MATERIALIZED; the rest is its too.
            let ast::Cte { alias: _, query: _, from: _, materialized, closing_paren_token: _ } = cte;
            refuse(&[(
                matches!(materialized, Some(ast::CteAsMaterialized::Materialized)),
                "WITH ... AS MATERIALIZED",
            )])?;
        }
    }
    if let Some(ast::OrderBy { kind: _, interpolate: Some(_) }) = order_by {
        return Err(syntax_error_at("INTERPOLATE"));
    }
    if for_clause.is_some() || settings.is_some() || format_clause.is_some() || !pipe_operators.is_empty() {
        return Err(syntax_error_at("FOR"));
    }
    Ok(())
}

/// One SELECT: DISTINCT, the select list, FROM, WHERE, GROUP BY, HAVING
/// and WINDOW are the binder's; INTO is refused; TOP and the other
/// dialects' clauses are PostgreSQL's syntax errors.
pub(super) fn select(s: &ast::Select) -> Result<(), SqlError> {
    let ast::Select {
        select_token: _,
        optimizer_hints,
        distinct: _,
        select_modifiers,
        top,
        top_before_distinct: _,
        projection: _,
        exclude,
        into,
        from: _,
        lateral_views,
        prewhere,
        selection: _,
        connect_by,
        group_by: _,
        cluster_by,
        distribute_by,
        sort_by,
        having: _,
        named_window: _,
        qualify,
        window_before_qualify: _,
        value_table_mode,
        flavor,
    } = s;
    if let Some(top) = top {
        let text = top.to_string();
        let after = text.split_whitespace().nth(1).unwrap_or("TOP");
        return Err(syntax_error_at(after));
    }
    // A top-level SELECT … INTO makes a table (create_as.rs); anywhere
    // else PostgreSQL's grammar refuses it.
    if into.is_some() {
        return Err(SqlError::new(SqlState::SYNTAX_ERROR, "SELECT ... INTO is not allowed here"));
    }
    let foreign = [
        !optimizer_hints.is_empty(),
        select_modifiers.is_some(),
        exclude.is_some(),
        !lateral_views.is_empty(),
        prewhere.is_some(),
        !connect_by.is_empty(),
        !cluster_by.is_empty(),
        !distribute_by.is_empty(),
        !sort_by.is_empty(),
        qualify.is_some(),
        value_table_mode.is_some(),
        *flavor != ast::SelectFlavor::Standard,
    ];
    if foreign.into_iter().any(|present| present) {
        return Err(syntax_error_at("SELECT"));
    }
    Ok(())
}

/// A table in FROM (or the target of UPDATE and DELETE): its name, alias
/// and (for a function) arguments and WITH ORDINALITY are the binder's;
/// TABLESAMPLE is refused, and WITH ORDINALITY after a table is
/// PostgreSQL's syntax error.
pub(super) fn table(t: &TableFactor) -> Result<(), SqlError> {
    let TableFactor::Table {
        name: _,
        alias,
        args,
        with_hints,
        version,
        with_ordinality,
        partitions,
        json_path,
        sample,
        index_hints,
    } = t
    else {
        return Ok(());
    };
    if *with_ordinality && args.is_none() {
        return Err(syntax_error_at("WITH"));
    }
    refuse(&[(sample.is_some(), "TABLESAMPLE")])?;
    if let Some(ast::TableAlias { explicit: _, name: _, columns: _, at }) = alias {
        if at.is_some() {
            return Err(syntax_error_at("AT"));
        }
    }
    if !with_hints.is_empty() || version.is_some() || !partitions.is_empty() || json_path.is_some() {
        return Err(syntax_error_at("WITH"));
    }
    if !index_hints.is_empty() {
        return Err(syntax_error_at("USE"));
    }
    Ok(())
}

/// `ONLY t` (no inheritance, so the same as `t`), which sqlparser reads as
/// a table named "only" with the alias `t`: the table it names. PostgreSQL
/// reserves ONLY, so an unquoted `only` can only mean this.
pub(super) fn without_only(t: &TableFactor) -> Option<TableFactor> {
    let TableFactor::Table { name, alias: Some(alias), .. } = t else { return None };
    let [ast::ObjectNamePart::Identifier(only)] = name.0.as_slice() else { return None };
    if only.quote_style.is_some() || !only.value.eq_ignore_ascii_case("only") || alias.explicit {
        return None;
    }
    if !alias.columns.is_empty() {
        return None;
    }
    let mut t = t.clone();
    if let TableFactor::Table { name, alias, .. } = &mut t {
        let real = alias.take().expect("matched above").name;
        *name = ast::ObjectName::from(vec![real]);
    }
    Some(t)
}

/// A function call: its name and arguments, OVER (the window binder's),
/// and an aggregate's FILTER and ORDER BY are the binder's. WITHIN GROUP,
/// IGNORE NULLS and the other argument clauses are refused, and so are
/// FILTER and ORDER BY on a window function.
pub(super) fn function(f: &ast::Function) -> Result<(), SqlError> {
    let ast::Function {
        name: _,
        uses_odbc_syntax,
        parameters,
        args,
        within_group,
        filter,
        null_treatment,
        over,
    } = f;
    if *uses_odbc_syntax || !matches!(parameters, ast::FunctionArguments::None) {
        return Err(syntax_error_at("("));
    }
    refuse(&[
        (!within_group.is_empty(), "WITHIN GROUP"),
        (null_treatment.is_some(), "IGNORE NULLS / RESPECT NULLS"),
        (over.is_some() && filter.is_some(), "FILTER in a window function"),
    ])?;
    if let ast::FunctionArguments::List(ast::FunctionArgumentList {
        duplicate_treatment: _,
        args: _,
        clauses,
    }) = args
    {
        for clause in clauses {
            match clause {
                // PostgreSQL's own refusal.
                ast::FunctionArgumentClause::OrderBy(_) if over.is_some() => {
                    return Err(SqlError::new(
                        SqlState::FEATURE_NOT_SUPPORTED,
                        "aggregate ORDER BY is not implemented for window functions",
                    ))
                }
                ast::FunctionArgumentClause::OrderBy(_) => {}
                ast::FunctionArgumentClause::Limit(_) => return Err(syntax_error_at("LIMIT")),
                other => return Err(syntax_error_at(&other.to_string())),
            }
        }
    }
    Ok(())
}
