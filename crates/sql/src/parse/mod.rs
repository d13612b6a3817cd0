//! From a Query message's text to statements: the pre-parser ahead of
//! sqlparser.
//!
//! ```text
//!   split        at semicolons outside quotes, comments and dollar quotes
//!   guard        sqlparser_guard/: how deep each statement nests, measured
//!                over its tokens; past max_stack_depth (or past what
//!                sqlparser would parse again and again) 54001, before
//!                sqlparser sees it
//!   by hand      VACUUM, ANALYZE, COPY options, CREATE SEQUENCE options
//!                (sequence_syntax.rs), CREATE DOMAIN's NOT NULL
//!                (domain_syntax.rs), FOR KEY SHARE / FOR NO KEY UPDATE
//!                (lock_syntax.rs); subscripted assignment targets folded
//!                into one identifier (subscript_targets.rs)
//!   sqlparser    everything else; its errors placed as PostgreSQL places
//!                them (syntax_error.rs)
//! ```
//!
//! Statements sqlparser does not read the way PostgreSQL does: VACUUM and
//! ANALYZE (its grammar is another dialect's, and it reads `vacuum
//! analyze` as a table named "analyze"), and COPY, whose options
//! (`with (freeze on)`, pgbench's form) it rejects. They are recognised
//! here by their first word and parsed by hand; everything else goes to
//! sqlparser.

pub(crate) mod aggregate_syntax;
pub(crate) mod alter_constraint_syntax;
pub(crate) mod alter_sequence_syntax;
pub(crate) mod column_option_syntax;
pub(crate) mod column_refs;
pub(crate) mod comment_syntax;
mod conflict_syntax;
mod create_as_syntax;
mod cursor_syntax;
mod do_syntax;
pub(crate) mod domain_syntax;
mod explain_syntax;
pub(crate) mod fk_action_syntax;
pub(crate) mod identity_syntax;
mod index_syntax;
mod like_syntax;
mod lock_syntax;
mod merge_syntax;
mod null_test_syntax;
mod overriding_syntax;
mod procedure_syntax;
pub(crate) mod reloptions_syntax;
pub(crate) mod rows_from_syntax;
pub(crate) mod schema_syntax;
mod sequence_syntax;
mod sqlparser_guard;
mod string_syntax;
pub(crate) mod subscript_targets;
mod syntax_error;
mod table_syntax;
mod token_walk;
pub(crate) mod trigger_syntax;
pub(crate) mod variadic_syntax;
mod view_syntax;
mod window_syntax;

pub use explain_syntax::{Explain, ExplainFormat, ExplainOptions};
pub(crate) use like_syntax::TableLike;
pub(crate) use overriding_syntax::Overriding;
pub(crate) use procedure_syntax::{atomic_statements, return_expr, RoutineWord};

use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Token, Tokenizer};

use self::sqlparser_guard::{measure, Nesting, MAX_REPARSED_LEVELS};
use self::syntax_error::{locate, Source};
use crate::stack::{parser_depth, too_deep, BigStack};

static DIALECT: PostgreSqlDialect = PostgreSqlDialect {};

pub use crate::statement::Ast;

/// One parsed statement.
#[derive(Debug)]
pub enum Parsed {
    Sql(Ast),
    Vacuum {
        tables: Vec<String>,
        analyze: bool,
        freeze: bool,
    },
    /// `ANALYZE [VERBOSE] [table [(column, …)], …]`: the tables, each with
    /// the columns named (none: all).
    Analyze {
        verbose: bool,
        targets: Vec<(String, Vec<String>)>,
    },
    Checkpoint,
    Copy(crate::copy::CopyStatement),
    AlterDomain(domain_syntax::AlterDomain),
    AlterSequence(Box<alter_sequence_syntax::AlterSequence>),
    /// `ALTER {TABLE | INDEX | VIEW | MATERIALIZED VIEW} … {SET | RESET}
    /// (storage parameters)`.
    AlterOptions(Box<reloptions_syntax::AlterOptions>),
    /// `COMMENT ON object IS text`.
    Comment(Box<comment_syntax::CommentOn>),
    /// `ALTER TABLE … ALTER CONSTRAINT name [NOT] DEFERRABLE …`.
    AlterConstraint(Box<alter_constraint_syntax::AlterConstraint>),
    /// `ALTER TABLE … ALTER [COLUMN] c SET {STORAGE | STATISTICS} …`.
    AlterColumnOptions(Box<column_option_syntax::AlterColumnOptions>),
    /// `ALTER … SET SCHEMA name`.
    SetSchema(Box<schema_syntax::SetSchema>),
    /// A statement of a CREATE SCHEMA with elements, run with `schema`
    /// first on the search_path (`None`: the CREATE SCHEMA itself); it
    /// answers nothing of its own ([`crate::Output::Silent`]).
    InSchema {
        schema: Option<String>,
        statement: Box<Parsed>,
        /// Where its text stands in the statement written (its errors'
        /// positions are moved there).
        place: schema_syntax::Place,
    },
    /// The command tag a CREATE SCHEMA with elements answers once they
    /// all ran.
    Tag(&'static str),
    /// `CREATE [OR REPLACE] [CONSTRAINT] TRIGGER …`.
    CreateTrigger(Box<trigger_syntax::CreateTrigger>),
    /// `ALTER TRIGGER name ON table RENAME TO new`.
    RenameTrigger(Box<trigger_syntax::RenameTrigger>),
    /// `DO [LANGUAGE name] code`: run by the session (plpgsql/).
    Do {
        language: String,
        code: String,
    },
    /// SET CONSTRAINTS {ALL | name, …} {DEFERRED | IMMEDIATE} (`names`
    /// `None`: ALL).
    SetConstraints {
        names: Option<Vec<String>>,
        deferred: bool,
    },
    /// `REINDEX [(options)] {INDEX | TABLE | SCHEMA | DATABASE | SYSTEM}
    /// [CONCURRENTLY] [name]`.
    Reindex {
        kind: ReindexKind,
        concurrently: bool,
        name: Option<sqlparser::ast::ObjectName>,
    },
    /// `FETCH` or `MOVE` (cursor_syntax.rs).
    Fetch(crate::statement::FetchStatement),
    /// `CREATE [OR REPLACE] AGGREGATE …` (aggregate_syntax.rs).
    CreateAggregate(Box<aggregate_syntax::CreateAggregate>),
    /// `DROP AGGREGATE …`.
    DropAggregate(Box<aggregate_syntax::DropAggregate>),
    /// `COMMENT ON AGGREGATE name (args) IS …`.
    CommentAggregate(Box<aggregate_syntax::CommentAggregate>),
    /// `ALTER AGGREGATE … {RENAME TO | OWNER TO | SET SCHEMA} …`.
    AlterAggregate(Box<aggregate_syntax::AlterAggregate>),
    /// `REFRESH MATERIALIZED VIEW [CONCURRENTLY] name [WITH [NO] DATA]`.
    Refresh {
        name: sqlparser::ast::ObjectName,
        concurrently: bool,
        data: bool,
    },
    /// `EXPLAIN [options] statement` (explain_syntax.rs): the statement
    /// is a query, INSERT, UPDATE or DELETE.
    Explain(Box<Explain>),
}

fn syntax(near: &str) -> SqlError {
    SqlError::new(SqlState::SYNTAX_ERROR, format!("syntax error at or near \"{near}\""))
}

/// A parser of `text` that stays within its recursion limit (derived from
/// `max_stack_depth`), and how deep the text nests: the text is tokenized,
/// and a text nested too deep for that limit, or with too many levels
/// sqlparser would parse again, is refused (as `RecursionLimitExceeded`)
/// before sqlparser parses it; see sqlparser_guard for why sqlparser must
/// not reach its limit.
fn parser(
    text: &str,
    prepared: &string_syntax::Prepared,
    max_stack_depth: usize,
) -> Result<(Parser<'static>, Nesting), ParserError> {
    let source = prepared.text.as_deref().unwrap_or(text);
    let mut tokens = Tokenizer::new(&DIALECT, source).with_unescape(true).tokenize_with_location()?;
    if let Err(at) = string_syntax::rewrite_tokens(&mut tokens, prepared) {
        // Located as sqlparser locates its errors (syntax_error.rs).
        return Err(ParserError::ParserError(format!(
            "Expected: end of expression, found: literal at Line: {}, Column: {}",
            at.line, at.column
        )));
    }
    subscript_targets::rewrite(&mut tokens);
    let blank = tokens.iter().take_while(|t| matches!(t.token, Token::Whitespace(_))).count();
    tokens.drain(..blank);
    let limit = parser_depth(max_stack_depth);
    let mut parser = Parser::new(&DIALECT).with_recursion_limit(limit).with_tokens_with_locations(tokens);
    let most = Nesting { depth: limit, reparsed: MAX_REPARSED_LEVELS };
    let nesting = measure(&mut parser, most);
    if nesting.depth > most.depth || nesting.reparsed > most.reparsed {
        return Err(ParserError::RecursionLimitExceeded);
    }
    Ok((parser, nesting))
}

/// Parses one expression as stored in the catalog (a column's DEFAULT,
/// written by sqlparser from an expression it parsed).
pub(crate) fn parse_expr(text: &str, max_stack_depth: usize) -> Result<sqlparser::ast::Expr, SqlError> {
    let prepared = string_syntax::prepare(text).map_err(|e| {
        SqlError::new(SqlState::INTERNAL_ERROR, format!("a stored expression does not parse: {}", e.message))
    })?;
    let parsed = parser(text, &prepared, max_stack_depth)
        .and_then(|(mut p, nesting)| BigStack::for_parse(text.len(), nesting.depth).run(|| p.parse_expr()));
    parsed.map_err(|e| match e {
        ParserError::RecursionLimitExceeded => too_deep(max_stack_depth),
        e => SqlError::new(SqlState::INTERNAL_ERROR, format!("a stored expression does not parse: {e}")),
    })
}

/// Parses a query the binder writes (a rewrite of the user's): 42601 for
/// text that is not one query.
pub(crate) fn parse_query(
    text: &str,
    max_stack_depth: usize,
) -> Result<Box<sqlparser::ast::Query>, SqlError> {
    match parse(text, max_stack_depth)?.pop() {
        Some(Parsed::Sql(ast)) => match ast.statement.as_deref() {
            Some(sqlparser::ast::Statement::Query(q)) => Ok(q.clone()),
            _ => Err(SqlError::new(SqlState::SYNTAX_ERROR, "a rewritten query is not a query")),
        },
        _ => Err(SqlError::new(SqlState::SYNTAX_ERROR, "a rewritten query is not a query")),
    }
}

/// Parses the query of `COPY (query) TO STDOUT`: one statement, or `None`.
pub(crate) fn copy_query(max_stack_depth: usize) -> impl FnOnce(&str) -> Result<Option<Ast>, SqlError> {
    move |text| {
        let mut parsed = parse(text, max_stack_depth)?;
        Ok(match (parsed.pop(), parsed.is_empty()) {
            (Some(Parsed::Sql(ast)), true) => Some(ast),
            _ => None,
        })
    }
}

/// Splits `sql` into statements. A statement nested deeper than
/// `max_stack_depth` allows sqlparser to go is refused with 54001.
pub fn parse(sql: &str, max_stack_depth: usize) -> Result<Vec<Parsed>, SqlError> {
    let mut out = Vec::new();
    for piece in split(sql) {
        let trimmed = piece.trim();
        let first =
            trimmed.split(|c: char| !c.is_ascii_alphabetic()).next().unwrap_or("").to_ascii_lowercase();
        if first == "create" {
            if let Some(parsed) = schema_syntax::parse_create_schema(trimmed) {
                let with = match parsed {
                    Ok(w) => w,
                    Err((err, at)) => {
                        let start = trimmed.as_ptr() as usize - sql.as_ptr() as usize;
                        return Err(match at {
                            Some(at) => err.at_position(sql[..start + at].chars().count() + 1),
                            None => err,
                        });
                    }
                };
                let start = sql[..trimmed.as_ptr() as usize - sql.as_ptr() as usize].chars().count();
                let place = |p: schema_syntax::Place| schema_syntax::Place { offset: start + p.offset, ..p };
                let moved = |e: SqlError, p: schema_syntax::Place| match e.position {
                    Some(at) => SqlError::from(snapscale_values::ErrorData {
                        position: Some(p.map(at)),
                        ..e.into_data()
                    }),
                    None => e,
                };
                let header_place = place(schema_syntax::Place::default());
                for header in parse(&with.header, max_stack_depth).map_err(|e| moved(e, header_place))? {
                    out.push(Parsed::InSchema {
                        schema: None,
                        statement: Box::new(header),
                        place: header_place,
                    });
                }
                for element in &with.elements {
                    let at = place(element.place);
                    for statement in parse(&element.text, max_stack_depth).map_err(|e| moved(e, at))? {
                        let schema = Some(with.schema.clone());
                        out.push(Parsed::InSchema { schema, statement: Box::new(statement), place: at });
                    }
                }
                out.push(Parsed::Tag("CREATE SCHEMA"));
                continue;
            }
        }
        if first == "copy" {
            out.push(Parsed::Copy(crate::copy::parse_statement(trimmed, copy_query(max_stack_depth))?));
            continue;
        }
        if first == "alter" {
            if let Some(parsed) = schema_syntax::parse_set_schema(trimmed) {
                out.push(Parsed::SetSchema(Box::new(parsed)));
                continue;
            }
            if let Some(parsed) = domain_syntax::parse_alter_domain(trimmed) {
                out.push(Parsed::AlterDomain(parsed?));
                continue;
            }
            if let Some(parsed) = alter_sequence_syntax::parse_alter_sequence(trimmed) {
                out.push(Parsed::AlterSequence(Box::new(parsed?)));
                continue;
            }
            if let Some(parsed) = column_option_syntax::parse_column_options(trimmed) {
                out.push(Parsed::AlterColumnOptions(Box::new(parsed)));
                continue;
            }
            if let Some(parsed) = alter_constraint_syntax::parse_alter_constraint(trimmed) {
                match parsed {
                    Ok(a) => out.push(Parsed::AlterConstraint(Box::new(a))),
                    Err((err, at)) => {
                        let start = trimmed.as_ptr() as usize - sql.as_ptr() as usize;
                        return Err(match at {
                            Some(at) => err.at_position(sql[..start + at].chars().count() + 1),
                            None => err,
                        });
                    }
                }
                continue;
            }
            if let Some(parsed) = reloptions_syntax::parse_alter_options(trimmed) {
                out.push(Parsed::AlterOptions(Box::new(parsed)));
                continue;
            }
        }
        if first == "comment" {
            if let Some(parsed) = aggregate_syntax::parse_comment_aggregate(trimmed) {
                out.push(Parsed::CommentAggregate(Box::new(
                    parsed.map_err(|e| at_semicolon(e, sql, trimmed))?,
                )));
                continue;
            }
            out.push(Parsed::Comment(Box::new(comment_syntax::parse_comment(trimmed)?)));
            continue;
        }
        if first == "reindex" {
            out.push(reindex(trimmed)?);
            continue;
        }
        if first == "fetch" || first == "move" {
            if let Some(parsed) = cursor_syntax::read_fetch(trimmed) {
                out.push(Parsed::Fetch(parsed?));
                continue;
            }
        }
        if first == "refresh" {
            out.push(refresh(trimmed)?);
            continue;
        }
        if first == "create" {
            if let Some(parsed) = trigger_syntax::parse_create_trigger(trimmed) {
                out.push(Parsed::CreateTrigger(Box::new(parsed?)));
                continue;
            }
            if let Some(parsed) = aggregate_syntax::parse_create_aggregate(trimmed) {
                out.push(Parsed::CreateAggregate(Box::new(
                    parsed.map_err(|e| at_semicolon(e, sql, trimmed))?,
                )));
                continue;
            }
        }
        if first == "drop" {
            if let Some(parsed) = aggregate_syntax::parse_drop_aggregate(trimmed) {
                out.push(Parsed::DropAggregate(Box::new(parsed.map_err(|e| at_semicolon(e, sql, trimmed))?)));
                continue;
            }
        }
        if first == "alter" {
            if let Some(parsed) = aggregate_syntax::parse_alter_aggregate(trimmed) {
                out.push(Parsed::AlterAggregate(Box::new(
                    parsed.map_err(|e| at_semicolon(e, sql, trimmed))?,
                )));
                continue;
            }
            if let Some(parsed) = trigger_syntax::parse_alter_trigger(trimmed) {
                out.push(Parsed::RenameTrigger(Box::new(parsed?)));
                continue;
            }
        }
        if first == "do" {
            let (language, code) = do_syntax::read_do(trimmed)?;
            out.push(Parsed::Do { language, code });
            continue;
        }
        if first == "set" {
            if let Some(parsed) = set_constraints(trimmed) {
                out.push(parsed?);
                continue;
            }
        }
        if first == "explain" {
            out.push(explain(sql, trimmed, max_stack_depth)?);
            continue;
        }
        if matches!(first.as_str(), "vacuum" | "analyze" | "analyse" | "checkpoint") {
            out.push(hand_parse(trimmed)?);
            continue;
        }
        // Where the statement is in the query string, for an error's
        // position (the pieces are slices of it).
        let source =
            Source { query: sql, start: piece.as_ptr() as usize - sql.as_ptr() as usize, len: piece.len() };
        // CREATE SEQUENCE's options in the order sqlparser reads them.
        // MERGE's INSERT DEFAULT VALUES, rewritten in place (positions
        // after it stay).
        let merge_rewritten = merge_syntax::rewrite_default_values(piece);
        let piece = merge_rewritten.as_deref().unwrap_or(piece);
        // expr ISNULL / NOTNULL, as IS [NOT] NULL.
        let null_tests = null_test_syntax::rewrite_null_tests(piece);
        let piece = null_tests.as_deref().unwrap_or(piece);
        // ROWS FROM (…) and `f(…) AS (col type, …)`, as marked calls.
        let rows_from = rows_from_syntax::rewrite_rows_from(piece);
        let piece = rows_from.as_deref().unwrap_or(piece);
        // f(…, VARIADIC array), as a marked named argument.
        let variadic_args = variadic_syntax::rewrite_variadic_args(piece);
        let piece = variadic_args.as_deref().unwrap_or(piece);
        // CREATE PROCEDURE, read as the CREATE FUNCTION it is shaped like
        // (rewritten in place).
        let procedure_text = procedure_syntax::procedure_as_function(piece);
        let procedure = procedure_text.is_some();
        let piece = procedure_text.as_deref().unwrap_or(piece);
        // ALTER / DROP {PROCEDURE | ROUTINE}, read as … FUNCTION (ROUTINE
        // grows the text by one character: positions after it move).
        let (word_text, routine_word, grew) = match procedure_syntax::routine_word_as_function(piece) {
            Some((text, word, grew)) => (Some(text), Some(word), grew),
            None => (None, None, 0),
        };
        let piece = word_text.as_deref().unwrap_or(piece);
        // A BEGIN ATOMIC body, blanked (lines kept) and kept.
        let (atomic_text, atomic_body) = match procedure_syntax::read_atomic_body(piece) {
            Some((text, body)) => (Some(text), Some(body)),
            None => (None, None),
        };
        let piece = atomic_text.as_deref().unwrap_or(piece);
        // `name OUT type`: the mode written first (as long).
        let modes_text = procedure_syntax::modes_first(piece);
        let piece = modes_text.as_deref().unwrap_or(piece);
        // WINDOW and [NOT] LEAKPROOF, blanked, and where a function's
        // attribute stands.
        let (attribute_text, routine_attributes) = match procedure_syntax::read_attributes(piece) {
            Some((text, attrs)) => (text, Some(attrs)),
            None => (None, None),
        };
        let piece = attribute_text.as_deref().unwrap_or(piece);
        // ALTER [MATERIALIZED] VIEW, as the ALTER TABLE it is.
        let alter_view = view_syntax::alter_view_as_table(piece);
        let altered_view = alter_view.as_ref().map(|(_, materialized)| *materialized);
        let reordered = alter_view
            .map(|(text, _)| text)
            .or_else(|| sequence_syntax::canonical_create_sequence(piece))
            .or_else(|| table_syntax::rewrite_table_queries(piece))
            .or_else(|| window_syntax::parenthesise_frame_casts(piece))
            .or_else(|| domain_syntax::canonical_create_domain(piece))
            .or_else(|| domain_syntax::canonical_drop_domain(piece));
        let piece = reordered.as_deref().unwrap_or(piece);
        // FOR KEY SHARE / FOR NO KEY UPDATE, which sqlparser lacks.
        let (rewritten, lock_strengths) = match lock_syntax::read_lock_strengths(piece) {
            Some((text, strengths)) => (Some(text), Some(strengths)),
            None => (None, None),
        };
        let piece_before_identity = rewritten.as_deref().unwrap_or(piece);
        // ALTER TABLE's identity actions, replaced by markers.
        let (identity_text, identity_actions) =
            match identity_syntax::read_identity_actions(piece_before_identity) {
                Some(Ok((text, actions))) => (Some(text), Some(std::sync::Arc::from(actions))),
                Some(Err(e)) => return Err(e),
                None => (None, None),
            };
        let origin = (reordered.is_none() && rewritten.is_none() && identity_text.is_none()).then(|| {
            // Every position a binder reports lies after the grown word.
            let chars_before = sql[..source.start].chars().count().saturating_sub(grew);
            std::sync::Arc::new(crate::statement::Origin { text: piece.to_owned(), chars_before })
        });
        let piece = identity_text.as_deref().unwrap_or(piece_before_identity);
        // DECLARE … CURSOR … FOR: the header, blanked; the query is
        // sqlparser's.
        let (blanked, declare) = match cursor_syntax::read_declare(piece) {
            Some(Ok((text, d))) => (Some(text), Some(Box::new(d))),
            Some(Err(e)) => return Err(e),
            None => (None, None),
        };
        let piece = blanked.as_deref().unwrap_or(piece);
        // CREATE TABLE name (a, b) AS …: the names, which sqlparser lacks
        // (blanked, so positions stay).
        let (blanked, ctas_columns) = match create_as_syntax::read_column_names(piece) {
            Some((text, names)) => (Some(text), Some(names)),
            None => (None, None),
        };
        let piece = blanked.as_deref().unwrap_or(piece);
        // CREATE VIEW … WITH CHECK OPTION: the clause, which sqlparser
        // lacks (blanked too).
        let (blanked, check_option) = match view_syntax::read_check_option(piece) {
            Some((text, option)) => (Some(text), Some(option)),
            None => (None, None),
        };
        let piece = blanked.as_deref().unwrap_or(piece);
        // CREATE MATERIALIZED VIEW … WITH [NO] DATA, likewise.
        let (blanked, matview_data) = match view_syntax::read_matview_data(piece) {
            Some((text, data)) => (Some(text), Some(data)),
            None => (None, None),
        };
        let piece = blanked.as_deref().unwrap_or(piece);
        // INSERT … OVERRIDING {SYSTEM | USER} VALUE, likewise.
        let (blanked, overriding) = match overriding_syntax::read_overriding(piece) {
            Some((text, o)) => (Some(text), Some(o)),
            None => (None, None),
        };
        let piece = blanked.as_deref().unwrap_or(piece);
        // ON CONFLICT targets with expressions or a WHERE, likewise.
        let (blanked, conflict_target) = match conflict_syntax::read_conflict_target(piece) {
            Some((text, t)) => (Some(text), Some(t)),
            None => (None, None),
        };
        let piece = blanked.as_deref().unwrap_or(piece);
        // DROP INDEX CONCURRENTLY, likewise.
        let blanked = index_syntax::read_drop_concurrently(piece);
        let concurrently = blanked.is_some();
        let piece = blanked.as_deref().unwrap_or(piece);
        // CREATE TABLE's LIKE elements, likewise.
        let (blanked, table_likes) = match like_syntax::read_table_likes(piece) {
            Some(Ok((text, likes))) => (Some(text), Some(likes)),
            Some(Err((word, at))) => {
                let err =
                    SqlError::new(SqlState::SYNTAX_ERROR, format!("syntax error at or near \"{word}\""));
                return Err(match reordered {
                    None => {
                        err.at_position(sql[..source.start].chars().count() + piece[..at].chars().count() + 1)
                    }
                    Some(_) => err,
                });
            }
            None => (None, None),
        };
        let piece = blanked.as_deref().unwrap_or(piece);
        // ON DELETE SET NULL / DEFAULT (columns), likewise.
        let (blanked, fk_set_columns) = match fk_action_syntax::read_set_columns(piece) {
            Some(Ok((text, lists))) => (Some(text), Some(lists)),
            Some(Err((err, at))) => {
                return Err(match reordered {
                    None => err.at_position(sql[..source.start].chars().count() + at + 1),
                    Some(_) => err,
                })
            }
            None => (None, None),
        };
        let piece = blanked.as_deref().unwrap_or(piece);
        // CREATE … WITH (storage parameters), likewise.
        let (blanked, storage_params) = match reloptions_syntax::read_create_options(piece) {
            Some((text, params)) => (Some(text), Some(params)),
            None => (None, None),
        };
        let piece = blanked.as_deref().unwrap_or(piece);
        // UPDATE / DELETE … WHERE CURRENT OF cursor, likewise.
        let (blanked, current_of) = match cursor_syntax::read_current_of(piece) {
            Some((text, name)) => (Some(text), Some(name)),
            None => (None, None),
        };
        let piece = blanked.as_deref().unwrap_or(piece);
        // sqlparser drops what it built when it fails; a long chain needs
        // the big stack then too.
        let stack = BigStack::for_source(piece.len());
        // E'' and U& literals, decoded with PostgreSQL's errors.
        let prepared = string_syntax::prepare(piece).map_err(|e| {
            let mut err = SqlError::new(e.code, e.message);
            if let Some(hint) = e.hint {
                err = err.with_hint(hint);
            }
            match e.at {
                Some(at) if reordered.is_none() => {
                    err.at_position(sql[..source.start].chars().count() + piece[..at].chars().count() + 1)
                }
                _ => err,
            }
        })?;
        let statements = parser(piece, &prepared, max_stack_depth).and_then(|(mut p, nesting)| {
            BigStack::for_parse(piece.len(), nesting.depth).run(|| {
                p.parse_statements().map(|statements| {
                    statements
                        .into_iter()
                        .map(|s| {
                            let lock_strengths = lock_strengths.clone();
                            let origin = origin.clone();
                            let ctas_columns = ctas_columns.clone();
                            Parsed::Sql(Ast {
                                statement: Some(Box::new(s)),
                                stack,
                                lock_strengths,
                                origin,
                                pre: Box::new(crate::statement::PreParsed {
                                    ctas_columns,
                                    check_option,
                                    overriding,
                                    concurrently,
                                    conflict_target: conflict_target.clone(),
                                    matview_data,
                                    identity_actions: identity_actions.clone(),
                                    table_likes: table_likes.clone(),
                                    storage_params: storage_params.clone(),
                                    fk_set_columns: fk_set_columns.clone(),
                                    altered_view,
                                    procedure,
                                    declare: declare.clone(),
                                    current_of: current_of.clone(),
                                    routine_word,
                                    atomic_body: atomic_body.clone(),
                                    routine_attributes: routine_attributes.clone(),
                                }),
                            })
                        })
                        .collect::<Vec<_>>()
                })
            })
        });
        match statements {
            Ok(statements) => out.extend(statements),
            Err(ParserError::RecursionLimitExceeded) => return Err(too_deep(max_stack_depth)),
            Err(e) => {
                let message = e.to_string();
                let message = message.strip_prefix("sql parser error: ").unwrap_or(&message).to_owned();
                // Two bodies (AS and RETURN): PostgreSQL's own words.
                if message == "AS specified more than once" || message == "RETURN specified more than once" {
                    return Err(SqlError::new(
                        SqlState::INVALID_FUNCTION_DEFINITION,
                        "duplicate function body specified",
                    ));
                }
                // A reordered statement's locations are not the user's.
                let located = if reordered.is_none() { locate(&message, &source) } else { None };
                return Err(located.unwrap_or_else(|| {
                    SqlError::new(SqlState::SYNTAX_ERROR, format!("syntax error: {message}"))
                }));
            }
        }
    }
    Ok(out)
}

/// EXPLAIN: its header read by hand, the statement after it parsed as
/// any statement is, from a copy of the query string with everything
/// before it blanked, so that the positions of its errors stay the
/// query string's.
fn explain(sql: &str, trimmed: &str, max_stack_depth: usize) -> Result<Parsed, SqlError> {
    let start = trimmed.as_ptr() as usize - sql.as_ptr() as usize;
    let (options, at) = explain_syntax::read_explain(trimmed).map_err(|e| match e.position {
        Some(p) => {
            let before = sql[..start].chars().count();
            SqlError::from(snapscale_values::ErrorData {
                position: u32::try_from(before + p as usize).ok(),
                ..e.into_data()
            })
        }
        None => e,
    })?;
    let inner_at = start + at;
    let end = start + trimmed.len();
    let blanked: String = sql[..inner_at]
        .chars()
        .map(|c| if c == '\n' { c } else { ' ' })
        .chain(sql[inner_at..end].chars())
        .collect();
    let first_word =
        sql[inner_at..end].split(|c: char| !c.is_ascii_alphanumeric() && c != '_').next().unwrap_or("");
    let refuse = || {
        SqlError::new(SqlState::SYNTAX_ERROR, format!("syntax error at or near \"{first_word}\""))
            .at_position(sql[..inner_at].chars().count() + 1)
    };
    let mut parsed = parse(&blanked, max_stack_depth)?;
    let statement = match (parsed.pop(), parsed.is_empty()) {
        (Some(Parsed::Sql(ast)), true) => ast,
        _ => return Err(refuse()),
    };
    use sqlparser::ast::Statement as S;
    match statement.statement.as_deref() {
        Some(S::Query(_) | S::Insert(_) | S::Update(_) | S::Delete(_)) if statement.pre.declare.is_none() => {
        }
        _ => return Err(refuse()),
    }
    Ok(Parsed::Explain(Box::new(Explain { options, statement: Box::new(Parsed::Sql(statement)) })))
}

/// A hand-read statement's error at its end, where the query string goes
/// on with the semicolon that ends it: PostgreSQL's parser saw that
/// semicolon, and names it.
fn at_semicolon(err: SqlError, sql: &str, statement: &str) -> SqlError {
    let end = statement.as_ptr() as usize - sql.as_ptr() as usize + statement.len();
    if err.message != "syntax error at end of input" || !sql[end..].trim_start().starts_with(';') {
        return err;
    }
    SqlError::from(snapscale_values::ErrorData {
        message: "syntax error at or near \";\"".into(),
        ..err.into_data()
    })
}

/// A statement's significant tokens, for the statements read by hand
/// (REINDEX, REFRESH MATERIALIZED VIEW).
struct Words(Vec<Token>);

impl Words {
    /// The tokens of `sql` (`first`: its first word, for a tokenizer error).
    fn of(sql: &str, first: &str) -> Result<Words, SqlError> {
        let tokens = Tokenizer::new(&DIALECT, sql).tokenize().map_err(|_| syntax(first))?;
        Ok(Words(
            tokens
                .into_iter()
                .filter(|t| !matches!(t, Token::Whitespace(_) | Token::SemiColon | Token::EOF))
                .collect(),
        ))
    }

    /// Token `i` if it is an unquoted word, in lower case.
    fn word(&self, i: usize) -> Option<String> {
        match self.0.get(i) {
            Some(Token::Word(w)) if w.quote_style.is_none() => Some(w.value.to_lowercase()),
            _ => None,
        }
    }

    /// The syntax error at token `i`.
    fn fail(&self, i: usize) -> SqlError {
        match self.0.get(i) {
            None => SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at end of input"),
            Some(t) => syntax(&t.to_string()),
        }
    }

    /// The possibly qualified name at `*i` (empty if there is none),
    /// moving past it.
    fn name(&self, i: &mut usize) -> Vec<sqlparser::ast::Ident> {
        let mut parts = Vec::new();
        while let Some(Token::Word(w)) = self.0.get(*i) {
            parts.push(sqlparser::ast::Ident {
                value: w.value.clone(),
                quote_style: w.quote_style,
                span: sqlparser::tokenizer::Span::empty(),
            });
            *i += 1;
            if self.0.get(*i) != Some(&Token::Period) {
                break;
            }
            *i += 1;
        }
        parts
    }
}

/// What REINDEX rebuilds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReindexKind {
    Index,
    Table,
    Schema,
    Database,
    System,
}

/// REINDEX, which sqlparser lacks.
fn reindex(sql: &str) -> Result<Parsed, SqlError> {
    let w = Words::of(sql, "REINDEX")?;
    let tokens = &w.0;
    let word = |i: usize| w.word(i);
    let fail = |i: usize| w.fail(i);
    let mut i = 1;
    let mut concurrently = false;
    // (VERBOSE [bool], CONCURRENTLY [bool], TABLESPACE name)
    if tokens.get(i) == Some(&Token::LParen) {
        i += 1;
        loop {
            match word(i).as_deref() {
                Some("verbose") => i += 1,
                Some("concurrently") => {
                    concurrently = true;
                    i += 1;
                }
                Some("tablespace") => {
                    return Err(SqlError::new(
                        SqlState::FEATURE_NOT_SUPPORTED,
                        "REINDEX … TABLESPACE is not supported",
                    ))
                }
                _ => return Err(fail(i)),
            }
            match word(i).as_deref() {
                Some("true" | "on") => i += 1,
                Some("false" | "off") => {
                    if word(i - 1).as_deref() == Some("concurrently") {
                        concurrently = false;
                    }
                    i += 1;
                }
                _ => {}
            }
            match tokens.get(i) {
                Some(Token::Comma) => i += 1,
                Some(Token::RParen) => {
                    i += 1;
                    break;
                }
                _ => return Err(fail(i)),
            }
        }
    }
    let kind = match word(i).as_deref() {
        Some("index") => ReindexKind::Index,
        Some("table") => ReindexKind::Table,
        Some("schema") => ReindexKind::Schema,
        Some("database") => ReindexKind::Database,
        Some("system") => ReindexKind::System,
        _ => return Err(fail(i)),
    };
    i += 1;
    if word(i).as_deref() == Some("concurrently") {
        concurrently = true;
        i += 1;
    }
    let parts = w.name(&mut i);
    if i != tokens.len() {
        return Err(fail(i));
    }
    if parts.is_empty() && matches!(kind, ReindexKind::Index | ReindexKind::Table | ReindexKind::Schema) {
        return Err(fail(i));
    }
    let name = (!parts.is_empty()).then(|| sqlparser::ast::ObjectName::from(parts));
    Ok(Parsed::Reindex { kind, concurrently, name })
}

/// REFRESH MATERIALIZED VIEW [CONCURRENTLY] name [WITH [NO] DATA], which
/// sqlparser lacks.
fn refresh(sql: &str) -> Result<Parsed, SqlError> {
    let w = Words::of(sql, "REFRESH")?;
    let tokens = &w.0;
    let word = |i: usize| w.word(i);
    let fail = |i: usize| w.fail(i);
    if word(1).as_deref() != Some("materialized") {
        return Err(fail(1));
    }
    if word(2).as_deref() != Some("view") {
        return Err(fail(2));
    }
    let mut i = 3;
    let concurrently = word(i).as_deref() == Some("concurrently");
    if concurrently {
        i += 1;
    }
    let parts = w.name(&mut i);
    if parts.is_empty() {
        return Err(fail(i));
    }
    let data = match (word(i).as_deref(), word(i + 1).as_deref(), word(i + 2).as_deref()) {
        (None, ..) if i == tokens.len() => true,
        (Some("with"), Some("data"), None) if i + 2 == tokens.len() => true,
        (Some("with"), Some("no"), Some("data")) if i + 3 == tokens.len() => false,
        _ => return Err(fail(if word(i).as_deref() == Some("with") { i + 1 } else { i })),
    };
    Ok(Parsed::Refresh { name: sqlparser::ast::ObjectName::from(parts), concurrently, data })
}

/// SET CONSTRAINTS {ALL | name [, …]} {DEFERRED | IMMEDIATE}, which
/// sqlparser lacks; `None` for any other SET.
fn set_constraints(sql: &str) -> Option<Result<Parsed, SqlError>> {
    let tokens: Vec<Token> = Tokenizer::new(&DIALECT, sql)
        .tokenize()
        .ok()?
        .into_iter()
        .filter(|t| !matches!(t, Token::Whitespace(_)))
        .collect();
    let word = |t: Option<&Token>| match t {
        Some(Token::Word(w)) => Some((w.value.to_lowercase(), w.quote_style.is_some(), w.value.clone())),
        _ => None,
    };
    if word(tokens.first()).map(|w| w.0) != Some("set".into())
        || word(tokens.get(1)).map(|w| w.0) != Some("constraints".into())
    {
        return None;
    }
    let mut i = 2;
    let names = match word(tokens.get(i)) {
        Some((w, false, _)) if w == "all" => {
            i += 1;
            None
        }
        _ => {
            let mut names = Vec::new();
            loop {
                // A name, possibly schema-qualified (the last part names it).
                let mut last = match word(tokens.get(i)) {
                    Some((folded, quoted, raw)) => {
                        if quoted {
                            raw
                        } else {
                            folded
                        }
                    }
                    None => {
                        return Some(Err(syntax(&tokens.get(i).map_or(String::new(), ToString::to_string))))
                    }
                };
                i += 1;
                while tokens.get(i) == Some(&Token::Period) {
                    last = match word(tokens.get(i + 1)) {
                        Some((folded, quoted, raw)) => {
                            if quoted {
                                raw
                            } else {
                                folded
                            }
                        }
                        None => return Some(Err(syntax("."))),
                    };
                    i += 2;
                }
                names.push(last);
                if tokens.get(i) != Some(&Token::Comma) {
                    break;
                }
                i += 1;
            }
            Some(names)
        }
    };
    let deferred = match word(tokens.get(i)).map(|w| w.0).as_deref() {
        Some("deferred") => true,
        Some("immediate") => false,
        _ => return Some(Err(syntax(&tokens.get(i).map_or(String::new(), ToString::to_string)))),
    };
    if !matches!(tokens.get(i + 1), None | Some(Token::SemiColon) | Some(Token::EOF)) {
        return Some(Err(syntax(&tokens[i + 1].to_string())));
    }
    Some(Ok(Parsed::SetConstraints { names, deferred }))
}

/// Splits at semicolons outside quotes, comments and dollar quotes;
/// pieces that are only blanks and comments are dropped. The body of a
/// `CREATE [OR REPLACE] {FUNCTION | PROCEDURE} … BEGIN ATOMIC … END` holds
/// semicolons of its own: within such a statement BEGIN and END (and a
/// CASE inside them, which END closes too) are counted outside
/// parentheses, and a semicolon splits only where none is open — the
/// heuristic psql applies before it sends the statement.
pub(crate) fn split(sql: &str) -> Vec<&str> {
    let b = sql.as_bytes();
    let mut pieces = Vec::new();
    let (mut start, mut i) = (0, 0);
    let mut meaningful = false;
    let mut atomic = AtomicDepth::default();
    while i < b.len() {
        match b[i] {
            c if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 => {
                let from = i;
                while i < b.len()
                    && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'$' || b[i] >= 0x80)
                {
                    i += 1;
                }
                atomic.word(&sql[from..i]);
                meaningful = true;
                continue;
            }
            b'(' => {
                atomic.parens += 1;
                meaningful = true;
            }
            b')' => {
                atomic.parens = atomic.parens.saturating_sub(1);
                meaningful = true;
            }
            b'\'' | b'"' => {
                let q = b[i];
                i += 1;
                while i < b.len() {
                    if b[i] == q {
                        if b.get(i + 1) == Some(&q) {
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    i += 1;
                }
                meaningful = true;
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i += 1;
            }
            b'$' => {
                // $tag$ ... $tag$ (a $1 parameter has no closing dollar).
                let tag_end = b[i + 1..].iter().position(|&c| !(c.is_ascii_alphanumeric() || c == b'_'));
                match tag_end.map(|n| i + 1 + n) {
                    Some(end) if b[end] == b'$' && !b[i + 1].is_ascii_digit() => {
                        let tag = &sql[i..=end];
                        match sql[end + 1..].find(tag) {
                            Some(close) => i = end + 1 + close + tag.len() - 1,
                            None => i = b.len(),
                        }
                    }
                    _ => {}
                }
                meaningful = true;
            }
            b';' if atomic.open > 0 => meaningful = true,
            b';' => {
                if meaningful {
                    pieces.push(&sql[start..i]);
                }
                start = i + 1;
                meaningful = false;
                atomic = AtomicDepth::default();
            }
            c if !c.is_ascii_whitespace() => meaningful = true,
            _ => {}
        }
        i += 1;
    }
    if meaningful && start < b.len() {
        pieces.push(&sql[start..]);
    }
    pieces
}

/// What `split` knows of the statement it is in: its first words, its open
/// parentheses, and how many BEGIN … END blocks of a routine's body are
/// open.
#[derive(Default)]
struct AtomicDepth {
    words: usize,
    /// Whether the statement so far reads CREATE [OR REPLACE].
    create: bool,
    or_replace: bool,
    routine: bool,
    parens: usize,
    open: usize,
}

impl AtomicDepth {
    fn word(&mut self, w: &str) {
        let is = |k: &str| w.eq_ignore_ascii_case(k);
        let routine_word = is("function") || is("procedure");
        match self.words {
            0 => self.create = is("create"),
            1 if self.create => {
                self.or_replace = is("or");
                self.routine = routine_word;
            }
            2 if self.or_replace => self.or_replace = is("replace"),
            3 if self.or_replace => self.routine = routine_word,
            _ => {}
        }
        self.words += 1;
        if !self.routine || self.parens > 0 {
            return;
        }
        // A CASE inside the body is closed by an END too.
        if is("begin") || (is("case") && self.open > 0) {
            self.open += 1;
        } else if is("end") {
            self.open = self.open.saturating_sub(1);
        }
    }
}

/// A quoted token after its opening quote `q`, the quote kept in front
/// (so names and literals stay distinguishable); a doubled quote is one.
fn quoted(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, q: char) -> Result<String, SqlError> {
    let mut word = String::from(q);
    loop {
        match chars.next() {
            Some(ch) if ch == q && chars.peek() == Some(&q) => {
                chars.next();
                word.push(q);
            }
            Some(ch) if ch == q => return Ok(word),
            Some(ch) => word.push(ch),
            None if q == '"' => {
                return Err(SqlError::new(SqlState::SYNTAX_ERROR, "unterminated quoted identifier"))
            }
            None => return Err(SqlError::new(SqlState::SYNTAX_ERROR, "unterminated quoted string")),
        }
    }
}

/// Words, parentheses and commas; quoted identifiers keep their case.
fn tokens(s: &str) -> Result<Vec<String>, SqlError> {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c == '(' || c == ')' || c == ',' {
            out.push(c.to_string());
            chars.next();
        } else if c == '"' || c == '\'' {
            chars.next();
            out.push(quoted(&mut chars, c)?);
        } else {
            let mut word = String::new();
            while let Some(&ch) = chars.peek() {
                if ch.is_whitespace() || ch == '(' || ch == ')' || ch == ',' {
                    break;
                }
                word.push(ch.to_ascii_lowercase());
                chars.next();
            }
            out.push(word);
        }
    }
    Ok(out)
}

/// A (possibly qualified) name token as the binder expects it.
fn name(tok: &str) -> String {
    tok.split('.')
        .map(|p| p.strip_prefix('"').unwrap_or(p).to_owned())
        .collect::<Vec<_>>()
        .last()
        .cloned()
        .unwrap_or_default()
}

fn hand_parse(s: &str) -> Result<Parsed, SqlError> {
    let toks = tokens(s)?;
    let mut t = toks.iter().map(String::as_str).peekable();
    match t.next() {
        Some("vacuum") => {
            let (mut analyze, mut freeze) = (false, false);
            if t.peek() == Some(&"(") {
                t.next();
                loop {
                    let option = match t.next() {
                        Some(")") => break,
                        Some(",") => continue,
                        Some(w) => w,
                        None => return Err(syntax("end of input")),
                    };
                    let value = match t.peek() {
                        None | Some(&")" | &",") => None,
                        Some(&v) => {
                            t.next();
                            Some(v)
                        }
                    };
                    let boolean = || match value {
                        None => Ok(true),
                        Some(v) => snapscale_values::pg_bool(v).ok_or_else(|| {
                            SqlError::new(
                                SqlState::SYNTAX_ERROR,
                                format!("{option} requires a Boolean value"),
                            )
                        }),
                    };
                    match option {
                        "analyze" | "analyse" => analyze = boolean()?,
                        "freeze" => freeze = boolean()?,
                        // Options that tune PostgreSQL's page-level work,
                        // which has no counterpart here: checked, accepted.
                        "verbose"
                        | "full"
                        | "disable_page_skipping"
                        | "skip_locked"
                        | "process_toast"
                        | "truncate" => {
                            boolean()?;
                        }
                        "index_cleanup" => {
                            if value.is_some_and(|v| v != "auto") {
                                boolean()?;
                            }
                        }
                        "parallel" => {
                            if !value
                                .and_then(|v| v.parse::<i64>().ok())
                                .is_some_and(|n| (0..=1024).contains(&n))
                            {
                                return Err(SqlError::new(
                                    SqlState::INVALID_PARAMETER_VALUE,
                                    "parallel workers for vacuum must be between 0 and 1024",
                                ));
                            }
                        }
                        other => {
                            return Err(SqlError::new(
                                SqlState::SYNTAX_ERROR,
                                format!("unrecognized VACUUM option \"{other}\""),
                            ))
                        }
                    }
                }
            }
            while let Some(&w) = t.peek() {
                match w {
                    "full" | "verbose" => {}
                    "freeze" => freeze = true,
                    "analyze" | "analyse" => analyze = true,
                    _ => break,
                }
                t.next();
            }
            Ok(Parsed::Vacuum { tables: table_list(&mut t)?, analyze, freeze })
        }
        Some("checkpoint") => match t.next() {
            None => Ok(Parsed::Checkpoint),
            Some(other) => Err(syntax(other)),
        },
        Some("analyze" | "analyse") => {
            let mut verbose = false;
            if t.peek() == Some(&"(") {
                t.next();
                loop {
                    match t.next() {
                        Some(")") => break,
                        Some(",") => {}
                        Some("verbose") => verbose = true,
                        Some("skip_locked") => {}
                        Some(w @ ("true" | "false" | "on" | "off" | "1" | "0")) => {
                            verbose &= snapscale_values::pg_bool(w) != Some(false);
                        }
                        Some(other) => {
                            return Err(SqlError::new(
                                SqlState::SYNTAX_ERROR,
                                format!("unrecognized ANALYZE option \"{other}\""),
                            ))
                        }
                        None => return Err(syntax("end of input")),
                    }
                }
            } else if t.peek() == Some(&"verbose") {
                t.next();
                verbose = true;
            }
            Ok(Parsed::Analyze { verbose, targets: analyze_targets(&mut t)? })
        }
        _ => Err(syntax(s)),
    }
}

/// `table [(column, …)], …`, as ANALYZE names what it analyzes.
fn analyze_targets<'a>(
    t: &mut std::iter::Peekable<impl Iterator<Item = &'a str>>,
) -> Result<Vec<(String, Vec<String>)>, SqlError> {
    let mut targets: Vec<(String, Vec<String>)> = Vec::new();
    while let Some(w) = t.next() {
        match w {
            "," => {}
            "(" => {
                let Some(last) = targets.last_mut() else { return Err(SyntaxNear(w).into()) };
                loop {
                    match t.next() {
                        Some(")") => break,
                        Some(",") => {}
                        Some("(") | None => return Err(syntax("end of input")),
                        Some(c) => last.1.push(name(c)),
                    }
                }
            }
            ")" => return Err(SyntaxNear(w).into()),
            w => targets.push((name(w), Vec::new())),
        }
    }
    Ok(targets)
}

fn table_list<'a>(t: &mut impl Iterator<Item = &'a str>) -> Result<Vec<String>, SqlError> {
    let mut tables = Vec::new();
    for w in t {
        match w {
            "," => {}
            "(" | ")" => return Err(SyntaxNear(w).into()),
            w => tables.push(name(w)),
        }
    }
    Ok(tables)
}

struct SyntaxNear<'a>(&'a str);

impl From<SyntaxNear<'_>> for SqlError {
    fn from(s: SyntaxNear<'_>) -> SqlError {
        syntax(s.0)
    }
}

#[cfg(test)]
mod tests {
    use super::sqlparser_guard::tests::{big_stack, soups, FRAGMENTS};
    use super::*;

    const DEPTH: usize = crate::stack::DEFAULT_MAX_STACK_DEPTH;

    fn parse(sql: &str) -> Result<Vec<Parsed>, SqlError> {
        super::parse(sql, DEPTH)
    }

    #[test]
    fn deep_nesting_is_54001_and_long_chains_parse() {
        let deep = format!("SELECT {}1{}", "(".repeat(1_000_000), ")".repeat(1_000_000));
        assert_eq!(super::parse(&deep, DEPTH).unwrap_err().code, "54001");
        let chain = format!("SELECT {}", vec!["1"; 100_000].join("+"));
        assert_eq!(parse(&chain).unwrap().len(), 1);
        // sqlparser drops the chain it built when the statement fails.
        let broken = format!("{chain} +");
        assert_eq!(parse(&broken).unwrap_err().code, "42601");
    }

    /// Nests past sqlparser's depth are refused before sqlparser sees
    /// them (it retried them for hours), NOT chains included (it called
    /// them syntax errors); so are nests of levels sqlparser would parse
    /// again, past 64. Below both, they parse.
    #[test]
    fn deep_nests_are_54001_before_sqlparser_sees_them() {
        let too_deep = |sql: String| {
            let err = parse(&sql).unwrap_err();
            assert_eq!(err.code, "54001", "{}", &sql[..40]);
            assert_eq!(err.message, "stack depth limit exceeded");
            assert!(err.hint.as_ref().is_some_and(|h| h.contains("\"max_stack_depth\" (currently 2048kB)")));
        };
        for open in
            ["CASE WHEN true THEN ", "ARRAY[", "NOT ", "- ", "ROW(", "(SELECT ", "1 IN (", "INTERVAL "]
        {
            too_deep(format!("SELECT {}1", open.repeat(17_000)));
            too_deep(format!("SELECT {}1", open.repeat(100_000)));
        }
        // 65 CASEs: 64 levels inside another's THEN branch.
        let cases = |n: usize| format!("SELECT {}1{}", "CASE WHEN true THEN ".repeat(n), " END".repeat(n));
        assert_eq!(parse(&cases(65)).unwrap().len(), 1);
        too_deep(cases(66));
        too_deep(format!("SELECT * FROM {}t JOIN u ON true{}", "(".repeat(65), ")".repeat(65)));
        assert_eq!(
            parse(&format!("SELECT * FROM {}t JOIN u ON true{}", "(".repeat(64), ")".repeat(64)))
                .unwrap()
                .len(),
            1
        );
        // Levels sqlparser parsed again: 30 POSITIONs took it years, 1 000
        // CEILs failing after their contents 5 s, 8 000 ARRAY< 8 s.
        too_deep(format!("SELECT {}1{}", "POSITION(".repeat(30), ")".repeat(30)));
        too_deep(format!("SELECT {}1{}", "CEIL(".repeat(1_000), " ORDER BY 1)".repeat(1_000)));
        too_deep(format!("SELECT {}int{}", "ARRAY< ".repeat(8_000), " >".repeat(8_000)));
        assert_eq!(parse(&format!("SELECT {}true", "NOT ".repeat(10_000))).unwrap().len(), 1);
        // A lower max_stack_depth lowers sqlparser's depth with it.
        let nots = format!("SELECT {}true", "NOT ".repeat(1_000));
        assert_eq!(super::parse(&nots, 100 << 10).unwrap_err().code, "54001");
        assert_eq!(parse(&nots).unwrap().len(), 1);
    }

    /// sqlparser drops the trees of alternatives it abandons deep in its
    /// recursion; a long chain dropped where it had gone on on a small
    /// stack of its own overflowed that stack (a SIGSEGV).
    #[test]
    fn a_long_chain_dropped_deep_in_a_failing_parse_does_not_overflow() {
        let chain = vec!["1"; 30_000].join("+");
        let sql = format!("SELECT {}CASE WHEN true THEN {chain} garbage", "(".repeat(3_000));
        assert_eq!(parse(&sql).unwrap_err().code, "42601");
    }

    /// The random token soups of the nesting module's tests: what the
    /// server does with each, well formed or not, takes no time to speak
    /// of (sqlparser parses some levels of a failing statement again).
    #[test]
    fn token_soups_parse_quickly() {
        big_stack(|| {
            let slowest = std::time::Duration::from_secs(10);
            for sql in soups() {
                let started = std::time::Instant::now();
                let _ = super::parse(&sql, DEPTH);
                assert!(started.elapsed() < slowest, "{:?} for {sql}", started.elapsed());
            }
        });
    }

    /// A search for repeated patterns that the server parses in more than
    /// linear time (run by hand, in a release build, after a sqlparser
    /// upgrade): every fragment and pair of fragments, repeated 100 and 400
    /// times, and 12 and 16 times for exponential growth.
    /// `cargo test --release -p snapscale-sql --lib slow_patterns -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn slow_patterns() {
        big_stack(|| {
            let time = |sql: &str| {
                let started = std::time::Instant::now();
                let _ = super::parse(sql, DEPTH);
                started.elapsed().as_secs_f64()
            };
            let mut slow = Vec::new();
            for (i, a) in FRAGMENTS.iter().enumerate() {
                for b in std::iter::once(&"").chain(FRAGMENTS[i..].iter()) {
                    for unit in [format!("{a} {b} "), format!("{b} {a} ")] {
                        let at = |n: usize| time(&format!("SELECT {}", unit.repeat(n)));
                        let (t12, t16) = (at(12), at(16));
                        let (t100, t400) = (at(100), at(400));
                        // Doubling per level, or worse than quadratic, and slow
                        // enough not to be noise (a deep statement's stack).
                        if (t16 > 0.05 && t16 > 8.0 * t12) || (t400 > 0.5 && t400 > 40.0 * t100) {
                            eprintln!(
                                "slow: {unit:?} 12: {t12:.4} 16: {t16:.4} 100: {t100:.4} 400: {t400:.4}"
                            );
                            slow.push(unit);
                        }
                    }
                }
            }
            assert!(slow.is_empty(), "{slow:?}");
        });
    }

    #[test]
    fn splits_outside_quotes_and_comments() {
        assert_eq!(split("a; b;"), vec!["a", " b"]);
        assert_eq!(split("select ';' -- x;\n; ;"), vec!["select ';' -- x;\n"]);
        assert_eq!(split("select $$a;b$$, $1; /* ; */"), vec!["select $$a;b$$, $1"]);
        assert_eq!(split("  ; -- only a comment"), Vec::<&str>::new());
        let atomic =
            "create or replace function f() returns int begin atomic select case when true then 1 end; \
                      select (2); end";
        assert_eq!(split(&format!("{atomic}; begin; select 1")), vec![atomic, " begin", " select 1"]);
        assert_eq!(parse("VACUUM; SELECT 1").unwrap().len(), 2);
    }

    #[test]
    fn pgbench_statements() {
        match &parse("vacuum analyze pgbench_branches").unwrap()[0] {
            Parsed::Vacuum { tables, analyze, .. } => {
                assert_eq!(tables, &["pgbench_branches"]);
                assert!(analyze);
            }
            other => panic!("{other:?}"),
        }
        match &parse("copy pgbench_accounts from stdin with (freeze on)").unwrap()[0] {
            Parsed::Copy(c) => {
                assert!(
                    matches!(&c.source, crate::copy::CopySource::Table { table, .. } if table == "pgbench_accounts")
                );
                assert_eq!(c.direction, crate::copy::CopyDirection::FromStdin);
            }
            other => panic!("{other:?}"),
        }
        match &parse("VACUUM").unwrap()[0] {
            Parsed::Vacuum { tables, analyze, freeze } => assert!(tables.is_empty() && !analyze && !freeze),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            &parse("copy t (a, b) to stdout").unwrap()[0],
            Parsed::Copy(c) if matches!(&c.source, crate::copy::CopySource::Table { columns, .. } if columns.len() == 2)
        ));
        assert_eq!(parse("copy t from '/etc/passwd'").unwrap_err().code, "0A000");
    }
}
