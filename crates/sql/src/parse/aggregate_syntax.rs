//! `CREATE [OR REPLACE] AGGREGATE`, `DROP AGGREGATE` and `ALTER AGGREGATE`,
//! read whole: sqlparser has none of them. PostgreSQL's grammar: the
//! argument list (`(*)`, `([mode] [name] type, …)`, with `ORDER BY …` for
//! an ordered-set aggregate) followed by the definition list of `name [=
//! value]` elements, or the old form with no argument list, whose
//! definition names the input type (`BASETYPE = …`). A definition's value
//! is kept as written (a string constant unquoted); the binder reads it as
//! a type, a function name or a number, as the element's name asks.

use snapscale_values::SqlError;
use sqlparser::ast::{DataType, ObjectName};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::keywords::Keyword;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, TokenWithSpan};

use super::lock_syntax::{keyword, may_start_with, statement_tokens};
use super::token_walk::{dotted, ident, matching, near, text_of};

/// `CREATE [OR REPLACE] AGGREGATE name (args) (definition)`.
#[derive(Clone, Debug)]
pub struct CreateAggregate {
    pub replace: bool,
    pub name: ObjectName,
    /// The argument list; `None` for the old form, whose definition names
    /// the input type (BASETYPE).
    pub args: Option<AggregateArgs>,
    pub definition: Vec<DefElem>,
}

/// An aggregate's argument list as written.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AggregateArgs {
    /// `(*)`: no arguments.
    pub star: bool,
    /// The arguments; an ordered-set aggregate's direct ones.
    pub args: Vec<AggregateArg>,
    /// `(… ORDER BY …)`: an ordered-set aggregate's aggregated arguments.
    pub ordered: Option<Vec<AggregateArg>>,
}

impl AggregateArgs {
    /// Every argument, the direct ones first.
    pub fn all(&self) -> impl Iterator<Item = &AggregateArg> {
        self.args.iter().chain(self.ordered.iter().flatten())
    }
}

/// One argument: `[IN | VARIADIC | OUT | INOUT] [name] type`.
#[derive(Clone, Debug, PartialEq)]
pub struct AggregateArg {
    /// The mode word, in lower case, if one was written.
    pub mode: Option<String>,
    pub name: Option<String>,
    pub ty: DataType,
}

/// One element of the definition list.
#[derive(Clone, Debug, PartialEq)]
pub struct DefElem {
    /// Folded to lower case unless quoted.
    pub name: String,
    pub value: Option<DefValue>,
}

/// A definition element's value.
#[derive(Clone, Debug, PartialEq)]
pub enum DefValue {
    /// A string constant, unquoted.
    String(String),
    /// Anything else, as written (a type, a function name with or without
    /// its argument types, a number, a keyword, an operator).
    Text(String),
}

impl DefValue {
    /// The value as PostgreSQL's defGetString reads it: a string's text,
    /// a word in lower case unless quoted.
    pub fn string(&self) -> String {
        match self {
            DefValue::String(s) => s.clone(),
            DefValue::Text(t) => match t.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
                Some(quoted) => quoted.replace("\"\"", "\""),
                None => t.to_lowercase(),
            },
        }
    }
}

/// `DROP AGGREGATE [IF EXISTS] name (args) [, …] [CASCADE | RESTRICT]`.
#[derive(Clone, Debug)]
pub struct DropAggregate {
    pub if_exists: bool,
    pub targets: Vec<(ObjectName, AggregateArgs)>,
    pub cascade: bool,
}

/// `ALTER AGGREGATE name (args) RENAME TO new | OWNER TO role | SET SCHEMA
/// schema`.
#[derive(Clone, Debug)]
pub struct AlterAggregate {
    pub name: ObjectName,
    pub args: AggregateArgs,
    pub action: AlterAggregateAction,
}

/// `COMMENT ON AGGREGATE name (args) IS {'text' | NULL}`.
#[derive(Clone, Debug)]
pub struct CommentAggregate {
    pub name: ObjectName,
    pub args: AggregateArgs,
    /// `None`: IS NULL (or an empty string): the comment goes.
    pub text: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum AlterAggregateAction {
    Rename(String),
    Owner(String),
    SetSchema(String),
}

/// `text` as one data type, if it is one.
pub(crate) fn data_type(text: &str) -> Option<DataType> {
    let mut parser = Parser::new(&PostgreSqlDialect {}).try_with_sql(text).ok()?;
    let ty = parser.parse_data_type().ok()?;
    matches!(parser.peek_token().token, Token::EOF).then_some(ty)
}

/// Whether `sql` starts with `word` then AGGREGATE (CREATE may have OR
/// REPLACE between); the tokens and the index after AGGREGATE.
fn aggregate_statement(sql: &str, word: &str) -> Option<(Vec<TokenWithSpan>, usize, bool)> {
    if !may_start_with(sql, word) {
        return None;
    }
    // Most statements never name an aggregate: no tokenizing for them.
    if !sql.as_bytes().windows(9).any(|w| w.eq_ignore_ascii_case(b"aggregate")) {
        return None;
    }
    let tokens = statement_tokens(sql)?;
    let is_word = |i: usize, w: &str| matches!(tokens.get(i).map(|t| &t.token), Some(Token::Word(x)) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w));
    if !is_word(0, word) {
        return None;
    }
    let replace = word == "create" && is_word(1, "or") && is_word(2, "replace");
    let at = if replace { 3 } else { 1 };
    is_word(at, "aggregate").then_some((tokens, at + 1, replace))
}

/// The statement, if `sql` is a CREATE AGGREGATE.
pub(crate) fn parse_create_aggregate(sql: &str) -> Option<Result<CreateAggregate, SqlError>> {
    let (tokens, i, replace) = aggregate_statement(sql, "create")?;
    Some(read_create(sql, &tokens, i, replace))
}

fn read_create(
    sql: &str,
    tokens: &[TokenWithSpan],
    i: usize,
    replace: bool,
) -> Result<CreateAggregate, SqlError> {
    let (name, mut i) = dotted(sql, tokens, i)?;
    if !matches!(tokens.get(i).map(|t| &t.token), Some(Token::LParen)) {
        return Err(near(sql, tokens, i));
    }
    let close = matching(tokens, i).ok_or_else(|| near(sql, tokens, tokens.len()))?;
    // A second list follows the argument list; the old form has one.
    let (args, definition_open) = if matches!(tokens.get(close + 1).map(|t| &t.token), Some(Token::LParen)) {
        (Some(read_args(sql, tokens, i, close)?), close + 1)
    } else {
        (None, i)
    };
    i = definition_open;
    let close = matching(tokens, i).ok_or_else(|| near(sql, tokens, tokens.len()))?;
    let definition = read_definition(sql, tokens, i, close)?;
    if close + 1 != tokens.len() {
        return Err(near(sql, tokens, close + 1));
    }
    Ok(CreateAggregate { replace, name, args, definition })
}

/// The argument list between the parentheses at `open` and `close`.
fn read_args(
    sql: &str,
    tokens: &[TokenWithSpan],
    open: usize,
    close: usize,
) -> Result<AggregateArgs, SqlError> {
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    let mut i = open + 1;
    if matches!(tokens.get(i).map(|t| &t.token), Some(Token::Mul)) {
        if i + 1 != close {
            return Err(near(sql, tokens, i + 1));
        }
        return Ok(AggregateArgs { star: true, ..AggregateArgs::default() });
    }
    if i == close {
        // `()`: PostgreSQL's grammar has no empty list.
        return Err(near(sql, tokens, i));
    }
    let mut lists: Vec<Vec<AggregateArg>> = vec![Vec::new()];
    let mut ordered = false;
    if kw(i) == Some(Keyword::ORDER) && kw(i + 1) == Some(Keyword::BY) {
        ordered = true;
        lists.push(Vec::new());
        i += 2;
    }
    loop {
        // One argument: up to a comma, ORDER BY or the end, outside
        // parentheses and brackets.
        let start = i;
        let mut depth = 0usize;
        while i < close {
            match &tokens[i].token {
                Token::LParen | Token::LBracket => depth += 1,
                Token::RParen | Token::RBracket => depth = depth.saturating_sub(1),
                Token::Comma if depth == 0 => break,
                _ if depth == 0
                    && !ordered
                    && kw(i) == Some(Keyword::ORDER)
                    && kw(i + 1) == Some(Keyword::BY) =>
                {
                    break
                }
                _ => {}
            }
            i += 1;
        }
        if start == i {
            return Err(near(sql, tokens, i));
        }
        let arg = read_arg(sql, tokens, start, i)?;
        lists.last_mut().expect("one list").push(arg);
        if i == close {
            break;
        }
        if kw(i) == Some(Keyword::ORDER) {
            ordered = true;
            lists.push(Vec::new());
            i += 2;
        } else {
            i += 1;
        }
    }
    let ordered_list = if lists.len() > 1 { lists.pop() } else { None };
    let args = lists.pop().unwrap_or_default();
    Ok(AggregateArgs { star: false, args, ordered: ordered_list })
}

/// `[mode] [name] type` (or `name mode type`) from tokens `from..to`.
fn read_arg(
    sql: &str,
    tokens: &[TokenWithSpan],
    mut from: usize,
    to: usize,
) -> Result<AggregateArg, SqlError> {
    let mode_at = |i: usize| match tokens.get(i).map(|t| &t.token) {
        Some(Token::Word(w)) if w.quote_style.is_none() && i < to => {
            let v = w.value.to_lowercase();
            matches!(v.as_str(), "in" | "out" | "inout" | "variadic").then_some(v)
        }
        _ => None,
    };
    let mut mode = mode_at(from);
    if mode.is_some() {
        from += 1;
    }
    if let Some(ty) = data_type(&text_of(sql, tokens, from, to)) {
        // A name alone is a type's (as PostgreSQL reads it).
        return Ok(AggregateArg { mode, name: None, ty });
    }
    let name = ident(sql, tokens, from)?;
    from += 1;
    if mode.is_none() {
        mode = mode_at(from);
        if mode.is_some() {
            from += 1;
        }
    }
    match data_type(&text_of(sql, tokens, from, to)) {
        Some(ty) => Ok(AggregateArg { mode, name: Some(name), ty }),
        None => Err(near(sql, tokens, from.min(to))),
    }
}

/// The definition list between the parentheses at `open` and `close`.
fn read_definition(
    sql: &str,
    tokens: &[TokenWithSpan],
    open: usize,
    close: usize,
) -> Result<Vec<DefElem>, SqlError> {
    let mut out = Vec::new();
    let mut i = open + 1;
    if i == close {
        return Err(near(sql, tokens, i));
    }
    loop {
        let name = ident(sql, tokens, i)?;
        i += 1;
        let value = match tokens.get(i).map(|t| &t.token) {
            Some(Token::Eq) => {
                i += 1;
                let start = i;
                let mut depth = 0usize;
                while i < close {
                    match &tokens[i].token {
                        Token::LParen | Token::LBracket => depth += 1,
                        Token::RParen | Token::RBracket => depth = depth.saturating_sub(1),
                        Token::Comma if depth == 0 => break,
                        _ => {}
                    }
                    i += 1;
                }
                if start == i {
                    return Err(near(sql, tokens, i));
                }
                Some(match &tokens[start].token {
                    Token::SingleQuotedString(s) | Token::EscapedStringLiteral(s) if i == start + 1 => {
                        DefValue::String(s.clone())
                    }
                    Token::DollarQuotedString(d) if i == start + 1 => DefValue::String(d.value.clone()),
                    _ => DefValue::Text(text_of(sql, tokens, start, i)),
                })
            }
            Some(Token::Comma | Token::RParen) => None,
            _ => return Err(near(sql, tokens, i)),
        };
        out.push(DefElem { name, value });
        if i >= close {
            break;
        }
        // A comma.
        i += 1;
    }
    Ok(out)
}

/// The statement, if `sql` is a DROP AGGREGATE.
pub(crate) fn parse_drop_aggregate(sql: &str) -> Option<Result<DropAggregate, SqlError>> {
    let (tokens, i, _) = aggregate_statement(sql, "drop")?;
    Some((|| {
        let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
        let mut i = i;
        let if_exists = kw(i) == Some(Keyword::IF) && kw(i + 1) == Some(Keyword::EXISTS);
        if if_exists {
            i += 2;
        }
        let mut targets = Vec::new();
        loop {
            let (name, next) = dotted(sql, &tokens, i)?;
            i = next;
            if !matches!(tokens.get(i).map(|t| &t.token), Some(Token::LParen)) {
                return Err(near(sql, &tokens, i));
            }
            let close = matching(&tokens, i).ok_or_else(|| near(sql, &tokens, tokens.len()))?;
            targets.push((name, read_args(sql, &tokens, i, close)?));
            i = close + 1;
            if !matches!(tokens.get(i).map(|t| &t.token), Some(Token::Comma)) {
                break;
            }
            i += 1;
        }
        let cascade = match kw(i) {
            Some(Keyword::CASCADE) => {
                i += 1;
                true
            }
            Some(Keyword::RESTRICT) => {
                i += 1;
                false
            }
            _ => false,
        };
        if i != tokens.len() {
            return Err(near(sql, &tokens, i));
        }
        Ok(DropAggregate { if_exists, targets, cascade })
    })())
}

/// The statement, if `sql` is an ALTER AGGREGATE.
pub(crate) fn parse_alter_aggregate(sql: &str) -> Option<Result<AlterAggregate, SqlError>> {
    let (tokens, i, _) = aggregate_statement(sql, "alter")?;
    Some((|| {
        let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
        let (name, i) = dotted(sql, &tokens, i)?;
        if !matches!(tokens.get(i).map(|t| &t.token), Some(Token::LParen)) {
            return Err(near(sql, &tokens, i));
        }
        let close = matching(&tokens, i).ok_or_else(|| near(sql, &tokens, tokens.len()))?;
        let args = read_args(sql, &tokens, i, close)?;
        let i = close + 1;
        let action = match (kw(i), kw(i + 1)) {
            (Some(Keyword::RENAME), Some(Keyword::TO)) => {
                AlterAggregateAction::Rename(ident(sql, &tokens, i + 2)?)
            }
            (Some(Keyword::OWNER), Some(Keyword::TO)) => {
                AlterAggregateAction::Owner(ident(sql, &tokens, i + 2)?)
            }
            (Some(Keyword::SET), Some(Keyword::SCHEMA)) => {
                AlterAggregateAction::SetSchema(ident(sql, &tokens, i + 2)?)
            }
            _ => return Err(near(sql, &tokens, i)),
        };
        if i + 3 != tokens.len() {
            return Err(near(sql, &tokens, i + 3));
        }
        Ok(AlterAggregate { name, args, action })
    })())
}

/// The statement, if `sql` is a COMMENT ON AGGREGATE.
pub(crate) fn parse_comment_aggregate(sql: &str) -> Option<Result<CommentAggregate, SqlError>> {
    if !may_start_with(sql, "comment") {
        return None;
    }
    let tokens = statement_tokens(sql)?;
    let is_word = |i: usize, w: &str| matches!(tokens.get(i).map(|t| &t.token), Some(Token::Word(x)) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w));
    if !(is_word(0, "comment") && is_word(1, "on") && is_word(2, "aggregate")) {
        return None;
    }
    Some((|| {
        let (name, i) = dotted(sql, &tokens, 3)?;
        if !matches!(tokens.get(i).map(|t| &t.token), Some(Token::LParen)) {
            return Err(near(sql, &tokens, i));
        }
        let close = matching(&tokens, i).ok_or_else(|| near(sql, &tokens, tokens.len()))?;
        let args = read_args(sql, &tokens, i, close)?;
        let i = close + 1;
        if !is_word(i, "is") {
            return Err(near(sql, &tokens, i));
        }
        let text = match tokens.get(i + 1).map(|t| &t.token) {
            Some(Token::SingleQuotedString(s) | Token::EscapedStringLiteral(s)) => Some(s.clone()),
            Some(Token::DollarQuotedString(d)) => Some(d.value.clone()),
            Some(Token::Word(w)) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("null") => None,
            _ => return Err(near(sql, &tokens, i + 1)),
        };
        if i + 2 != tokens.len() {
            return Err(near(sql, &tokens, i + 2));
        }
        Ok(CommentAggregate { name, args, text: text.filter(|t| !t.is_empty()) })
    })())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn create(sql: &str) -> CreateAggregate {
        parse_create_aggregate(sql).expect("a CREATE AGGREGATE").expect("it parses")
    }

    #[test]
    fn both_forms_are_read() {
        let c = create(
            "CREATE AGGREGATE myaggp05a(BASETYPE = int, SFUNC = tfnp, STYPE = int[],\n  FINALFUNC = ffp, INITCOND = '{}');",
        );
        assert!(c.args.is_none());
        let names: Vec<&str> = c.definition.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["basetype", "sfunc", "stype", "finalfunc", "initcond"]);
        assert_eq!(c.definition[2].value, Some(DefValue::Text("int[]".into())));
        assert_eq!(c.definition[4].value, Some(DefValue::String("{}".into())));
        let c = create("create or replace aggregate s.build_group(anyelement, n integer) (SFUNC = add_group, \"Stype\" = anyarray, hypothetical)");
        assert!(c.replace);
        assert_eq!(c.name.to_string(), "s.build_group");
        let args = c.args.unwrap();
        assert_eq!(args.args.len(), 2);
        assert_eq!(args.args[1].name.as_deref(), Some("n"));
        assert_eq!(c.definition[1].name, "Stype");
        assert_eq!(c.definition[2].value, None);
        let c = create(
            "CREATE AGGREGATE newcnt (*) (sfunc = int8inc, stype = int8, initcond = '0', parallel = safe)",
        );
        assert!(c.args.unwrap().star);
        let c = create("create aggregate my_rank(VARIADIC \"any\" ORDER BY VARIADIC \"any\") (stype = internal, sfunc = f)");
        let args = c.args.unwrap();
        assert_eq!(args.args[0].mode.as_deref(), Some("variadic"));
        assert_eq!(args.ordered.as_ref().unwrap().len(), 1);
        let c = create(
            "create aggregate p(ORDER BY double precision) (stype = numeric, sfunc = balk(int8, int4))",
        );
        let args = c.args.unwrap();
        assert!(args.args.is_empty());
        assert_eq!(args.ordered.unwrap()[0].ty, DataType::DoublePrecision);
        assert_eq!(c.definition[1].value, Some(DefValue::Text("balk(int8, int4)".into())));
        assert!(parse_create_aggregate("create table aggregate (a int)").is_none());
        assert!(parse_create_aggregate("create aggregate a(int) (sfunc = )").unwrap().is_err());
    }

    #[test]
    fn drop_and_alter_are_read() {
        let d = parse_drop_aggregate("DROP AGGREGATE IF EXISTS a(int), b(*) CASCADE").unwrap().unwrap();
        assert!(d.if_exists && d.cascade);
        assert_eq!(d.targets.len(), 2);
        assert!(d.targets[1].1.star);
        let a = parse_alter_aggregate("alter aggregate my_percentile_disc(float8 ORDER BY anyelement)\n  rename to test_percentile_disc")
            .unwrap()
            .unwrap();
        assert_eq!(a.action, AlterAggregateAction::Rename("test_percentile_disc".into()));
        assert_eq!(a.args.ordered.unwrap().len(), 1);
    }
}
