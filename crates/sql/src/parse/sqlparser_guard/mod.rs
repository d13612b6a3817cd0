//! How deep a statement nests, measured over its tokens before sqlparser
//! parses it, so that sqlparser is never given a statement it cannot parse
//! within its recursion limit (54001 instead).
//!
//! sqlparser's limit ([`crate::stack::parser_depth`]) does not stop it
//! cleanly. When a reserved word's construct fails to parse,
//! `parse_prefix_inner` retries the word as an identifier (`try_parse` of the
//! reserved-word arm, then `maybe_parse` of the identifier arm), and
//! `RecursionLimitExceeded` is one of the failures it swallows. Past the
//! limit, a nest of `CASE WHEN true THEN` or `ARRAY[` is then taken apart
//! level by level as identifiers and parsed again, in cubic time or worse
//! (with the limit at 1 600, 1 700 levels took 3 s in a release build; at
//! the default 16 384 that is about an hour, on a runtime worker), and a
//! NOT chain ends in a syntax error instead of 54001.
//!
//! Retries like these make a failing statement cost one more parse of what
//! lies inside each such level, below the limit too: a CASE in the operand
//! or THEN branch of another CASE (the outer CASE goes on with the inner
//! one's WHEN), an `ARRAY[` (the identifier `array` takes the bracket as a
//! subscript), `ARRAY<` (a type, tried at every expression's start), the
//! parenthesis of CAST, CONVERT, CEIL, SUBSTRING and the like (the word is
//! retried as a function's name: [`reparsing`]), and a parenthesised join
//! in FROM (tried as a derived table, then as a join). Nested, such levels
//! took polynomial time (1 000 `CEIL(` levels failing after their
//! contents: 5 s; 8 000 `ARRAY<`: 8 s), and POSITION and `IN (SELECT -`
//! exponential time (each level doubles the work).
//! They are bounded separately ([`MAX_REPARSED_LEVELS`]), so that a
//! statement costs at most about that many ordinary parses of its length.
//!
//! The scan follows sqlparser's expression parser closely enough to bound its
//! recursion from above: a frame for every bracket, CASE, prefix operator
//! and pending right-hand side, closed where sqlparser's precedence climbing
//! (asked through [`Parser::get_next_precedence`], so the precedences are
//! sqlparser's own) would return. Flat chains (`a + b + …`, `x = 1 OR …`,
//! `NOT a AND NOT b …`, IN lists) stay flat. Tests check the bound against
//! sqlparser itself: a statement parses with the limit set to its measure
//! exactly as it does without a limit.

use sqlparser::dialect::{Dialect, PostgreSqlDialect, Precedence};
use sqlparser::keywords::Keyword;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::Token;

/// The most levels on one path whose contents sqlparser parses again when
/// the statement fails inside them (see the module's documentation).
pub(crate) const MAX_REPARSED_LEVELS: usize = 64;

/// What sqlparser's recursion counts around the outermost expression: the
/// statement, its query, the expression, and the data-type attempt at every
/// expression's start, with a margin.
const BASE: usize = 6;

/// A subquery's parenthesis: sqlparser's query, the select item's
/// expression, and a margin.
const QUERY_WEIGHT: usize = 3;

/// How deep a statement nests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Nesting {
    /// An upper bound of the recursion depth sqlparser reaches parsing it.
    pub depth: usize,
    /// The most levels on one path that sqlparser may parse again (a
    /// POSITION counts 16: see [`reparsing`]).
    pub reparsed: usize,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Branch {
    Operand,
    When,
    Then,
    Else,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    /// The statement.
    Root,
    Paren,
    /// The parenthesised name of `OPERATOR(schema.op)`, after which the
    /// right-hand side follows.
    OperatorName,
    Bracket,
    Brace,
    /// `ARRAY<` in a type name.
    Angle,
    Case(Branch),
    /// A prefix operator's operand or an infix operator's right-hand side:
    /// sqlparser's `parse_subexpr(prec)`, which returns at an operator of
    /// precedence `prec` or lower.
    Operand,
    /// BETWEEN's lower bound, which its AND ends.
    BetweenLow,
}

impl Kind {
    fn is_barrier(self) -> bool {
        !matches!(self, Kind::Operand | Kind::BetweenLow)
    }
}

struct Frame {
    kind: Kind,
    prec: u8,
    weight: usize,
    /// What the frame counts towards [`Nesting::reparsed`].
    reparsed: usize,
    /// A barrier in a FROM list: a parenthesis after its comma is a table.
    from_list: bool,
}

struct Scan {
    frames: Vec<Frame>,
    /// Where the barriers (brackets, CASEs, the root) are in `frames`.
    barriers: Vec<usize>,
    /// Open brackets by kind: parentheses, square brackets, braces, angles.
    open: [usize; 4],
    depth: usize,
    reparsed: usize,
    max: Nesting,
    /// Operators push their right-hand side without ending anything (where
    /// sqlparser may have read them as operators or as identifiers).
    keep: bool,
}

/// The index of a bracket kind in [`Scan::open`].
fn bracket(kind: Kind) -> Option<usize> {
    match kind {
        Kind::Paren | Kind::OperatorName => Some(0),
        Kind::Bracket => Some(1),
        Kind::Brace => Some(2),
        Kind::Angle => Some(3),
        _ => None,
    }
}

impl Scan {
    fn new() -> Scan {
        let root = Frame { kind: Kind::Root, prec: 0, weight: BASE, reparsed: 0, from_list: false };
        Scan {
            frames: vec![root],
            barriers: vec![0],
            open: [0; 4],
            depth: BASE,
            reparsed: 0,
            max: Nesting { depth: BASE, reparsed: 0 },
            keep: false,
        }
    }

    fn push(&mut self, kind: Kind, prec: u8, weight: usize, reparsed: usize) {
        if kind.is_barrier() {
            self.barriers.push(self.frames.len());
        }
        if let Some(b) = bracket(kind) {
            self.open[b] += 1;
        }
        self.frames.push(Frame { kind, prec, weight, reparsed, from_list: false });
        self.depth += weight;
        self.reparsed += reparsed;
        self.max.depth = self.max.depth.max(self.depth);
        self.max.reparsed = self.max.reparsed.max(self.reparsed);
    }

    /// A level the rest of the statement stays inside (PREPARE … AS and
    /// EXPLAIN parse the statement that follows recursively).
    fn deepen_root(&mut self) {
        self.frames[0].weight += 1;
        self.depth += 1;
        self.max.depth = self.max.depth.max(self.depth);
    }

    /// Pops the top frame; the root stays.
    fn pop(&mut self) {
        if self.frames.len() > 1 {
            let f = self.frames.pop().expect("more than the root");
            if f.kind.is_barrier() {
                self.barriers.pop();
            }
            if let Some(b) = bracket(f.kind) {
                self.open[b] -= 1;
            }
            self.depth -= f.weight;
            self.reparsed -= f.reparsed;
        }
    }

    fn top(&self) -> &Frame {
        self.frames.last().expect("the root stays")
    }

    fn barrier_kind(&self) -> Kind {
        self.frames[*self.barriers.last().expect("the root")].kind
    }

    fn barrier(&mut self) -> &mut Frame {
        let at = *self.barriers.last().expect("the root");
        &mut self.frames[at]
    }

    /// What a comma, a clause keyword or a CASE keyword does: every
    /// expression up to the innermost bracket or CASE ends.
    fn end_expressions(&mut self) {
        while !self.top().kind.is_barrier() {
            self.pop();
        }
    }

    /// An infix operator of precedence `prec` ends the operands that bind
    /// at least as tightly, and opens its right-hand side.
    fn infix(&mut self, prec: u8, kind: Kind) {
        while !self.keep && !self.top().kind.is_barrier() && self.top().prec >= prec {
            self.pop();
        }
        self.push(kind, prec, 1, 0);
    }

    /// AND: the end of a BETWEEN's lower bound if one is open, else an
    /// infix operator.
    fn and(&mut self, prec: u8, between: u8) {
        while !self.keep && !self.top().kind.is_barrier() && self.top().prec >= prec {
            if self.top().kind == Kind::BetweenLow {
                let top = self.frames.last_mut().expect("not the root");
                top.kind = Kind::Operand;
                top.prec = between;
                return;
            }
            self.pop();
        }
        self.push(Kind::Operand, prec, 1, 0);
    }

    /// A closing bracket of `kind`'s sort: pops to its opening one (and
    /// anything unclosed inside it), and says which it was; a closer
    /// without an opener is ignored. Amortised constant time: what is
    /// walked over is popped.
    fn close(&mut self, kind: Kind) -> Option<Kind> {
        let b = bracket(kind).expect("a bracket");
        if self.open[b] == 0 {
            return None;
        }
        let at = *self.barriers.iter().rev().find(|&&i| bracket(self.frames[i].kind) == Some(b))?;
        let opened = self.frames[at].kind;
        while self.frames.len() > at {
            self.pop();
        }
        Some(opened)
    }
}

fn keyword(t: &Token) -> Keyword {
    match t {
        Token::Word(w) => w.keyword,
        _ => Keyword::NoKeyword,
    }
}

/// Keywords that sqlparser reads before an expression, where it expects
/// one (`SELECT DISTINCT - x`, `ORDER BY - x`, `SUBSTRING(x FROM - 1)`).
/// Taking any other word there for an operand is safe: sqlparser reads it
/// as an identifier.
fn precedes_expression(k: Keyword) -> bool {
    use Keyword::*;
    matches!(
        k,
        SELECT
            | DISTINCT
            | ALL
            | BY
            | WHERE
            | HAVING
            | ON
            | WHEN
            | THEN
            | ELSE
            | END
            | RETURNING
            | LIMIT
            | OFFSET
            | RETURN
            | DEFAULT
            | CHECK
            | FROM
            | FOR
            | IN
            | PLACING
            | LEADING
            | TRAILING
            | BOTH
            | AS
            | SET
            | TO
            | VARIADIC
    )
}

/// What a parenthesis after this word counts towards
/// [`Nesting::reparsed`]. sqlparser parses such a word's construct (CAST,
/// CONVERT, CEIL, SUBSTRING, …; NOT, CASE and INTERVAL before a
/// parenthesis) and, when that fails after the parenthesis's contents
/// (`CAST(x AS int ORDER BY 1)`), parses the contents again as a function's
/// arguments, which may succeed: the nest of 1 000 such levels took 5 s.
/// POSITION does so within the construct, so its failures are not
/// remembered and each level doubles the work (22 levels: 7 s): it counts
/// 16.
fn reparsing(k: Keyword) -> usize {
    use Keyword::*;
    match k {
        POSITION => 16,
        CAST | TRY_CAST | SAFE_CAST | CONVERT | TRY_CONVERT | CEIL | FLOOR | SUBSTR | SUBSTRING | OVERLAY
        | EXTRACT | NOT | CASE | INTERVAL => 1,
        _ => 0,
    }
}

/// Whether an expression that has read a word goes on at `t` (an operator,
/// a bracket, a field access), as opposed to ending there (`SELECT x`,
/// `SELECT *`, `SELECT DISTINCT`).
fn continues_expression(t: &Token) -> bool {
    match t {
        Token::Word(w) => matches!(
            w.keyword,
            Keyword::AND
                | Keyword::OR
                | Keyword::XOR
                | Keyword::NOT
                | Keyword::IN
                | Keyword::IS
                | Keyword::NOTNULL
                | Keyword::LIKE
                | Keyword::ILIKE
                | Keyword::SIMILAR
                | Keyword::REGEXP
                | Keyword::RLIKE
                | Keyword::MATCH
                | Keyword::GLOB
                | Keyword::MEMBER
                | Keyword::BETWEEN
                | Keyword::OVERLAPS
                | Keyword::AT
                | Keyword::COLLATE
                | Keyword::OPERATOR
                | Keyword::DIV
        ),
        Token::Number(..)
        | Token::SingleQuotedString(_)
        | Token::DoubleQuotedString(_)
        | Token::DollarQuotedString(_)
        | Token::NationalStringLiteral(_)
        | Token::EscapedStringLiteral(_)
        | Token::UnicodeStringLiteral(_)
        | Token::HexStringLiteral(_)
        | Token::Placeholder(_)
        | Token::Mul
        | Token::EOF => false,
        _ => true,
    }
}

/// Pushes a prefix operator's operand, of precedence `prec`, or, where the
/// word before may have been an operand (`either`) and sqlparser may read
/// the operator as an infix or postfix one (`WHERE ~ x`: the column
/// `where`; `AS ! ILIKE …`), of the lower of the two precedences, so that
/// the frame lasts while either reading's would. Returns whether either
/// may come next: after a postfix `!`, an operator.
fn prefix(s: &mut Scan, parser: &Parser<'_>, either: bool, prec: u8) -> bool {
    match parser.get_next_precedence().unwrap_or(0) {
        infix if either && infix > 0 => {
            s.push(Kind::Operand, prec.min(infix), 1, 0);
            true
        }
        _ => {
            s.push(Kind::Operand, prec, 1, 0);
            false
        }
    }
}

/// Measures the statement(s) in `parser`'s tokens, up to where either
/// measure passes `stop`'s, and leaves the parser where it found it: at its
/// first token, which must not be whitespace.
pub(crate) fn measure(parser: &mut Parser<'_>, stop: Nesting) -> Nesting {
    let pg = PostgreSqlDialect {};
    let prec = |p| pg.prec_value(p);
    let mut s = Scan::new();
    // An expression is expected (prefix position), or an operator.
    let mut expecting = true;
    // Either may come: after a word that sqlparser reads before an
    // expression in some places and as an identifier in others.
    let mut either = false;
    let mut after_array = false;
    let mut after_case = false;
    let mut after_operator = false;
    // What the parenthesis after a word counts towards `reparsed`.
    let mut after_reparsing_word = 0;
    let mut after_in = false;
    // `TABLE(`: sqlparser tries a type at an expression's start, and the
    // type TABLE(…) holds column definitions whose DEFAULT is an
    // expression: two levels to the expression inside.
    let mut after_table = false;
    // A parenthesis here is a table (FROM, JOIN, a FROM list's comma, a
    // table's parenthesis).
    let mut table_next = false;
    while s.max.depth <= stop.depth && s.max.reparsed <= stop.reparsed {
        let token = &parser.peek_token_ref().token;
        let was_array = std::mem::take(&mut after_array);
        let was_either = std::mem::take(&mut either);
        let was_case = std::mem::take(&mut after_case);
        let was_operator = std::mem::take(&mut after_operator);
        let reparsing_word = std::mem::take(&mut after_reparsing_word);
        let was_in = std::mem::take(&mut after_in);
        let was_table = std::mem::take(&mut after_table);
        let was_table_next = std::mem::take(&mut table_next);
        // Tokens taken with this one (multi-word operators).
        let mut extra = 0;
        let kw = keyword(token);
        after_reparsing_word = reparsing(kw);
        after_in = kw == Keyword::IN;
        after_table = kw == Keyword::TABLE;
        match kw {
            Keyword::FROM | Keyword::JOIN => {
                table_next = true;
                s.barrier().from_list = true;
            }
            Keyword::LATERAL | Keyword::USING => table_next = true,
            Keyword::WHERE
            | Keyword::GROUP
            | Keyword::HAVING
            | Keyword::ORDER
            | Keyword::LIMIT
            | Keyword::OFFSET
            | Keyword::FETCH
            | Keyword::WINDOW
            | Keyword::UNION
            | Keyword::INTERSECT
            | Keyword::EXCEPT
            | Keyword::RETURNING
            | Keyword::SET
            | Keyword::SELECT
            | Keyword::VALUES => s.barrier().from_list = false,
            _ => {}
        }
        let case_word = matches!(kw, Keyword::WHEN | Keyword::THEN | Keyword::ELSE | Keyword::END)
            && matches!(s.barrier_kind(), Kind::Case(_))
            && (!expecting || was_either || (kw == Keyword::WHEN && was_case));
        match token {
            Token::EOF => break,
            Token::SemiColon => {
                s = Scan { max: s.max, ..Scan::new() };
                expecting = true;
            }
            Token::LParen => {
                let query = matches!(
                    keyword(&parser.peek_nth_token_ref(1).token),
                    Keyword::SELECT | Keyword::WITH | Keyword::VALUES
                );
                let table = expecting && was_table_next;
                let kind = if was_operator { Kind::OperatorName } else { Kind::Paren };
                let weight = if query {
                    QUERY_WEIGHT
                } else if table || was_table {
                    2
                } else {
                    1
                };
                // IN (SELECT …): sqlparser tries a query, then a list of
                // expressions, and when the word after SELECT lets an
                // expression go on, both read what follows: each level
                // doubles the work (`x IN (SELECT - x IN (SELECT - …`).
                let both = was_in && query && continues_expression(&parser.peek_nth_token_ref(2).token);
                let reparsed = usize::from(table && !query) + reparsing_word + if both { 16 } else { 0 };
                s.push(kind, 0, weight, reparsed);
                s.barrier().from_list = table;
                table_next = table && !query;
                expecting = true;
            }
            Token::LBracket => {
                s.push(Kind::Bracket, 0, 1, usize::from(was_array));
                expecting = true;
            }
            Token::LBrace => {
                s.push(Kind::Brace, 0, 1, 0);
                expecting = true;
            }
            Token::Lt if was_array => {
                s.push(Kind::Angle, 0, 1, 1);
                expecting = true;
            }
            Token::RParen => {
                let closed = s.close(Kind::Paren);
                expecting = closed == Some(Kind::OperatorName);
            }
            Token::RBracket => {
                s.close(Kind::Bracket);
                expecting = false;
            }
            Token::RBrace => {
                s.close(Kind::Brace);
                expecting = false;
            }
            Token::Gt | Token::GtEq | Token::ShiftRight if s.barrier_kind() == Kind::Angle => {
                s.close(Kind::Angle);
                if *token == Token::ShiftRight && s.barrier_kind() == Kind::Angle {
                    s.close(Kind::Angle);
                }
                // Where the type does not parse, sqlparser reads `array <
                // x > y` as comparisons: the `>` has a right-hand side.
                let p = parser.get_next_precedence().unwrap_or(0);
                s.push(Kind::Operand, p, 1, 0);
                expecting = true;
            }
            Token::Comma => {
                s.end_expressions();
                table_next = s.barrier().from_list;
                expecting = true;
            }
            // CASE's own words, where sqlparser's CASE reads them (before
            // an operand they are identifiers).
            Token::Word(_) if case_word => {
                s.end_expressions();
                expecting = true;
                match kw {
                    Keyword::END => {
                        s.pop();
                        expecting = false;
                    }
                    Keyword::WHEN => s.barrier().kind = Kind::Case(Branch::When),
                    Keyword::THEN => s.barrier().kind = Kind::Case(Branch::Then),
                    _ => s.barrier().kind = Kind::Case(Branch::Else),
                }
            }
            Token::Word(_) if expecting && kw == Keyword::CASE => {
                let reparsed = matches!(s.barrier_kind(), Kind::Case(Branch::Operand | Branch::Then));
                s.push(Kind::Case(Branch::Operand), 0, 1, usize::from(reparsed));
                after_case = true;
                // Where the CASE fails, sqlparser reads the word as an
                // identifier and what follows as an operator.
                either = true;
            }
            Token::Word(_) if expecting && kw == Keyword::NOT => {
                s.push(Kind::Operand, prec(Precedence::UnaryNot), 1, 0);
                // NOT LIKE, NOT IN … if the word before was an operand.
                either = was_either;
            }
            // Its value is one prefix: any operator ends it. Where the
            // interval fails, sqlparser reads the word as an identifier and
            // what follows as an operator: either may come.
            Token::Word(_) if expecting && kw == Keyword::INTERVAL => {
                s.push(Kind::Operand, u8::MAX, 1, 0);
                either = true;
            }
            // ARRAY[…], ARRAY(…) and the type ARRAY<…>; before anything
            // else sqlparser reads it as an identifier, an operand.
            Token::Word(_) if expecting && kw == Keyword::ARRAY => {
                let next = &parser.peek_nth_token_ref(1).token;
                after_array = matches!(next, Token::LBracket | Token::LParen | Token::Lt);
                expecting = after_array;
            }
            Token::Word(_) if expecting && kw == Keyword::EXISTS => {}
            Token::Minus | Token::Plus if expecting => {
                either = prefix(&mut s, parser, was_either, prec(Precedence::MulDivModOp))
            }
            Token::ExclamationMark if expecting => {
                either = prefix(&mut s, parser, was_either, prec(Precedence::UnaryNot))
            }
            Token::Tilde
            | Token::DoubleExclamationMark
            | Token::PGSquareRoot
            | Token::PGCubeRoot
            | Token::AtSign
            | Token::Sharp
            | Token::AtDashAt
            | Token::AtAt
            | Token::QuestionMarkDash
            | Token::QuestionPipe
                if expecting =>
            {
                either = prefix(&mut s, parser, was_either, prec(Precedence::PlusMinus))
            }
            _ => {
                if matches!(kw, Keyword::PREPARE | Keyword::EXPLAIN) {
                    s.deepen_root();
                }
                let p = parser.get_next_precedence().unwrap_or(0);
                let word = matches!(token, Token::Word(_));
                if expecting && word && !(was_either && p > 0) {
                    // sqlparser reads a word where an expression starts as
                    // an identifier (AND, IS and FROM too), unless it reads
                    // it before an expression.
                    expecting = precedes_expression(kw);
                    either = expecting;
                } else if expecting && !word && p > 0 {
                    // An operator where an expression starts: sqlparser
                    // fails here, or (having taken the word before for an
                    // operand) reads it as an infix operator. Counted as
                    // one, without ending what it would end.
                    s.push(Kind::Operand, p, 1, 0);
                } else if p == 0 {
                    if expecting {
                        // An operand.
                        expecting = false;
                    } else {
                        // The expression's end (a clause's keyword, an
                        // alias), a keyword before an expression, or part
                        // of the operand (`date '2020-01-01'`): either may
                        // come.
                        expecting = true;
                        either = true;
                        if kw == Keyword::ESCAPE {
                            // LIKE's ESCAPE takes an expression of its own.
                            s.infix(prec(Precedence::Like), Kind::Operand);
                        }
                    }
                } else {
                    // An operator after an operand, or a word operator where
                    // either may come: then it ends nothing, and either may
                    // come after it too.
                    s.keep = expecting;
                    either = expecting;
                    expecting = true;
                    let next = keyword(&parser.peek_nth_token_ref(1).token);
                    match kw {
                        Keyword::NOT | Keyword::IS => {
                            // NOT LIKE / IN / BETWEEN / NULL …; IS [NOT] x.
                            let at = if kw == Keyword::IS && next == Keyword::NOT { 2 } else { 1 };
                            let word = keyword(&parser.peek_nth_token_ref(at).token);
                            let postfix = matches!(
                                word,
                                Keyword::NULL
                                    | Keyword::TRUE
                                    | Keyword::FALSE
                                    | Keyword::UNKNOWN
                                    | Keyword::JSON
                                    | Keyword::NORMALIZED
                            );
                            let infix = matches!(
                                word,
                                Keyword::DISTINCT
                                    | Keyword::LIKE
                                    | Keyword::ILIKE
                                    | Keyword::IN
                                    | Keyword::BETWEEN
                                    | Keyword::SIMILAR
                                    | Keyword::MEMBER
                                    | Keyword::REGEXP
                                    | Keyword::RLIKE
                                    | Keyword::MATCH
                                    | Keyword::GLOB
                            );
                            extra = if postfix || infix { at } else { at - 1 };
                            after_in = word == Keyword::IN;
                            // NOT here is an operator, not NOT (…).
                            after_reparsing_word = 0;
                            if postfix {
                                s.infix(p, Kind::Operand);
                                s.pop();
                                expecting = false;
                            } else if word == Keyword::BETWEEN {
                                s.infix(p, Kind::BetweenLow);
                            } else {
                                // DISTINCT FROM, SIMILAR TO, MEMBER OF.
                                let third = keyword(&parser.peek_nth_token_ref(at + 1).token);
                                if infix && matches!(third, Keyword::FROM | Keyword::TO | Keyword::OF) {
                                    extra += 1;
                                }
                                s.infix(p, Kind::Operand);
                            }
                        }
                        Keyword::BETWEEN => s.infix(p, Kind::BetweenLow),
                        // `x NOTNULL`: a postfix operator, like IS NULL.
                        Keyword::NOTNULL => {
                            s.infix(p, Kind::Operand);
                            s.pop();
                            expecting = false;
                        }
                        Keyword::AND => s.and(p, prec(Precedence::Between)),
                        Keyword::OPERATOR => {
                            after_operator = true;
                            s.infix(p, Kind::Operand);
                        }
                        Keyword::AT | Keyword::SIMILAR | Keyword::MEMBER => {
                            // AT TIME ZONE, SIMILAR TO, MEMBER OF.
                            let words: &[Keyword] = match kw {
                                Keyword::AT => &[Keyword::TIME, Keyword::ZONE],
                                Keyword::SIMILAR => &[Keyword::TO],
                                _ => &[Keyword::OF],
                            };
                            extra = words
                                .iter()
                                .enumerate()
                                .take_while(|&(i, w)| keyword(&parser.peek_nth_token_ref(i + 1).token) == *w)
                                .count();
                            s.infix(p, Kind::Operand);
                        }
                        _ if *token == Token::Period => {
                            // A field access: no expression of its own.
                        }
                        _ => {
                            // = ANY (…), LIKE ALL (…).
                            if matches!(next, Keyword::ANY | Keyword::ALL | Keyword::SOME)
                                && parser.peek_nth_token_ref(2).token == Token::LParen
                            {
                                extra = 1;
                            }
                            s.infix(p, Kind::Operand);
                        }
                    }
                }
            }
        }
        s.keep = false;
        for _ in 0..=extra {
            parser.advance_token();
        }
    }
    while parser.index() > 0 {
        parser.prev_token();
    }
    s.max
}

#[cfg(test)]
pub(crate) mod tests;
