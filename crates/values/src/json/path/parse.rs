//! The jsonpath grammar as a recursive-descent parser that accepts exactly
//! PostgreSQL's (bison) grammar and reports a syntax error at the same
//! token bison would, then PostgreSQL's post-parse checks (`@` at the
//! root, `last` outside subscripts). Nesting is bounded so deep input gives
//! an error instead of overflowing the stack.

use snapscale_sqlstate::SqlState;

use super::ast::*;
use super::lex::{scan_error, Kw, Lexer, Token, T};
use crate::numeric::Numeric;
use crate::SqlError;

/// Stack the parser and the evaluator may use below their entry point
/// before they fail with 54001 (the threads that run statements have
/// 16 MB; callers need this much beyond what they use themselves).
/// Unoptimised builds have frames several times larger, so they get more.
pub(crate) const STACK_BUDGET: usize = if cfg!(debug_assertions) { 12 << 20 } else { 4 << 20 };

/// The current stack position.
#[inline(never)]
pub(crate) fn stack_pos() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

/// True once the stack has grown more than [`STACK_BUDGET`] past `base`.
pub(crate) fn too_deep_from(base: usize) -> bool {
    base.abs_diff(stack_pos()) > STACK_BUDGET
}

/// PostgreSQL's 54001 report, for input nested too deeply.
pub(crate) fn too_deep() -> SqlError {
    SqlError::new(SqlState::STATEMENT_TOO_COMPLEX, "stack depth limit exceeded").with_hint(
        "Increase the configuration parameter \"max_stack_depth\" (currently 2048kB), after ensuring the \
         platform's stack depth limit is adequate.",
    )
}

/// What a parsed phrase is, for the grammar's expr/predicate split.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum K {
    /// An expression.
    Expr,
    /// A predicate that can't take accessors.
    Pred,
    /// `( predicate )`: a predicate that may still take accessors (then
    /// it is an expression) or `is unknown`.
    ParenPred,
}

struct Parser<'a> {
    lx: Lexer<'a>,
    peeked: Option<Token>,
    base: usize,
}

/// The result of parsing: lax mode and the expression, or None for
/// empty input.
pub(crate) fn parse(input: &str) -> Result<Option<(bool, Chain)>, SqlError> {
    let mut p = Parser { lx: Lexer::new(input), peeked: None, base: stack_pos() };
    if p.peek()?.t == T::Eof {
        return Ok(None);
    }
    let mut lax = true;
    match p.peek()?.t {
        T::Keyword(Kw::Strict) => {
            p.bump()?;
            lax = false;
        }
        T::Keyword(Kw::Lax) => {
            p.bump()?;
        }
        _ => {}
    }
    let (e, _) = p.or()?;
    if p.peek()?.t != T::Eof {
        return Err(p.error());
    }
    check(&e, 0, false)?;
    Ok(Some((lax, e)))
}

fn single(item: Item) -> Chain {
    Chain(vec![item])
}

fn is_comp(t: &T) -> Option<BinOp> {
    Some(match t {
        T::Equal => BinOp::Eq,
        T::NotEqual => BinOp::Ne,
        T::Less => BinOp::Lt,
        T::Greater => BinOp::Gt,
        T::LessEq => BinOp::Le,
        T::GreaterEq => BinOp::Ge,
        _ => return None,
    })
}

fn method_of(kw: Kw) -> Option<Method> {
    Some(match kw {
        Kw::Abs => Method::Abs,
        Kw::Size => Method::Size,
        Kw::Type => Method::Type,
        Kw::Floor => Method::Floor,
        Kw::Double => Method::Double,
        Kw::Ceiling => Method::Ceiling,
        Kw::KeyValue => Method::KeyValue,
        _ => return None,
    })
}

impl<'a> Parser<'a> {
    fn peek(&mut self) -> Result<&Token, SqlError> {
        if self.peeked.is_none() {
            self.peeked = Some(self.lx.next_token()?);
        }
        Ok(self.peeked.as_ref().expect("peeked"))
    }

    fn bump(&mut self) -> Result<Token, SqlError> {
        self.peek()?;
        Ok(self.peeked.take().expect("peeked"))
    }

    /// A syntax error at the lookahead token.
    fn error(&self) -> SqlError {
        let near = self.peeked.as_ref().and_then(|t| t.near.as_deref());
        scan_error("syntax error", near)
    }

    fn expect(&mut self, t: T) -> Result<Token, SqlError> {
        if self.peek()?.t != t {
            return Err(self.error());
        }
        self.bump()
    }

    fn enter(&mut self) -> Result<(), SqlError> {
        if too_deep_from(self.base) {
            return Err(too_deep());
        }
        Ok(())
    }

    /// Requires a predicate (or parenthesised one) from the phrase just
    /// parsed; otherwise the lookahead is where bison fails.
    fn want_pred(&mut self, k: K) -> Result<(), SqlError> {
        if k == K::Expr {
            self.peek()?;
            return Err(self.error());
        }
        Ok(())
    }

    fn want_expr(&mut self, k: K) -> Result<(), SqlError> {
        if k != K::Expr {
            self.peek()?;
            return Err(self.error());
        }
        Ok(())
    }

    fn or(&mut self) -> Result<(Chain, K), SqlError> {
        let (mut l, mut lk) = self.and()?;
        while self.peek()?.t == T::Or {
            self.want_pred(lk)?;
            self.bump()?;
            let (r, rk) = self.and()?;
            self.want_pred(rk)?;
            l = single(Item::Binary(BinOp::Or, Box::new(l), Box::new(r)));
            lk = K::Pred;
        }
        Ok((l, lk))
    }

    fn and(&mut self) -> Result<(Chain, K), SqlError> {
        let (mut l, mut lk) = self.not()?;
        while self.peek()?.t == T::And {
            self.want_pred(lk)?;
            self.bump()?;
            let (r, rk) = self.not()?;
            self.want_pred(rk)?;
            l = single(Item::Binary(BinOp::And, Box::new(l), Box::new(r)));
            lk = K::Pred;
        }
        Ok((l, lk))
    }

    fn not(&mut self) -> Result<(Chain, K), SqlError> {
        match self.peek()?.t {
            T::Not => {
                self.bump()?;
                self.enter()?;
                let arg = match self.peek()?.t {
                    T::Char(b'(') => {
                        self.bump()?;
                        let (e, k) = self.or()?;
                        self.want_pred(k)?;
                        self.expect(T::Char(b')'))?;
                        e
                    }
                    T::Keyword(Kw::Exists) => self.exists()?,
                    _ => return Err(self.error()),
                };
                Ok((single(Item::Unary(UnOp::Not, Box::new(arg))), K::Pred))
            }
            T::Keyword(Kw::Exists) => Ok((self.exists()?, K::Pred)),
            _ => self.cmp(),
        }
    }

    /// `exists ( expr )`, at EXISTS.
    fn exists(&mut self) -> Result<Chain, SqlError> {
        self.bump()?;
        self.expect(T::Char(b'('))?;
        self.enter()?;
        let (e, k) = self.add()?;
        self.want_expr(k)?;
        self.expect(T::Char(b')'))?;
        Ok(single(Item::Unary(UnOp::Exists, Box::new(e))))
    }

    fn cmp(&mut self) -> Result<(Chain, K), SqlError> {
        let (l, lk) = self.add()?;
        if lk == K::ParenPred && self.peek()?.t == T::Keyword(Kw::Is) {
            self.bump()?;
            self.expect(T::Keyword(Kw::Unknown))?;
            return Ok((single(Item::Unary(UnOp::IsUnknown, Box::new(l))), K::Pred));
        }
        let t = self.peek()?.t.clone();
        if let Some(op) = is_comp(&t) {
            self.want_expr(lk)?;
            self.bump()?;
            let (r, rk) = self.add()?;
            self.want_expr(rk)?;
            return Ok((single(Item::Binary(op, Box::new(l), Box::new(r))), K::Pred));
        }
        match t {
            T::Keyword(Kw::Starts) => {
                self.want_expr(lk)?;
                self.bump()?;
                self.expect(T::Keyword(Kw::With))?;
                let r = match self.peek()?.t {
                    T::Str => Item::String(self.bump()?.val),
                    T::Variable => Item::Variable(self.bump()?.val),
                    _ => return Err(self.error()),
                };
                Ok((single(Item::Binary(BinOp::StartsWith, Box::new(l), Box::new(single(r)))), K::Pred))
            }
            T::Keyword(Kw::LikeRegex) => {
                self.want_expr(lk)?;
                self.bump()?;
                let pattern = self.expect(T::Str)?.val;
                let mut flags = 0u8;
                if self.peek()?.t == T::Keyword(Kw::Flag) {
                    self.bump()?;
                    let f = self.expect(T::Str)?.val;
                    for ch in f.chars() {
                        flags |= match ch {
                            'i' => FLAG_I,
                            's' => FLAG_S,
                            'm' => FLAG_M,
                            'x' => FLAG_X,
                            'q' => FLAG_Q,
                            _ => {
                                return Err(SqlError::new(
                                    SqlState::SYNTAX_ERROR,
                                    "invalid input syntax for type jsonpath",
                                )
                                .with_detail(format!(
                                    "Unrecognized flag character \"{ch}\" in LIKE_REGEX predicate."
                                )))
                            }
                        };
                    }
                }
                super::regex::compile(&pattern, flags)?;
                Ok((single(Item::LikeRegex { expr: Box::new(l), pattern, flags }), K::Pred))
            }
            _ => Ok((l, lk)),
        }
    }

    fn add(&mut self) -> Result<(Chain, K), SqlError> {
        let (mut l, mut lk) = self.mul()?;
        loop {
            let op = match self.peek()?.t {
                T::Char(b'+') => BinOp::Add,
                T::Char(b'-') => BinOp::Sub,
                _ => return Ok((l, lk)),
            };
            self.want_expr(lk)?;
            self.bump()?;
            let (r, rk) = self.mul()?;
            self.want_expr(rk)?;
            l = single(Item::Binary(op, Box::new(l), Box::new(r)));
            lk = K::Expr;
        }
    }

    fn mul(&mut self) -> Result<(Chain, K), SqlError> {
        let (mut l, mut lk) = self.unary()?;
        loop {
            let op = match self.peek()?.t {
                T::Char(b'*') => BinOp::Mul,
                T::Char(b'/') => BinOp::Div,
                T::Char(b'%') => BinOp::Mod,
                _ => return Ok((l, lk)),
            };
            self.want_expr(lk)?;
            self.bump()?;
            let (r, rk) = self.unary()?;
            self.want_expr(rk)?;
            l = single(Item::Binary(op, Box::new(l), Box::new(r)));
            lk = K::Expr;
        }
    }

    fn unary(&mut self) -> Result<(Chain, K), SqlError> {
        let minus = match self.peek()?.t {
            T::Char(b'+') => false,
            T::Char(b'-') => true,
            _ => return self.postfix(),
        };
        self.bump()?;
        self.enter()?;
        let (e, k) = self.unary()?;
        self.want_expr(k)?;
        // A plain number takes the sign directly.
        if e.0.len() == 1 {
            if let Item::Numeric(n) = &e.0[0] {
                let n = if minus { n.neg() } else { n.clone() };
                return Ok((single(Item::Numeric(n)), K::Expr));
            }
        }
        let op = if minus { UnOp::Minus } else { UnOp::Plus };
        Ok((single(Item::Unary(op, Box::new(e))), K::Expr))
    }

    fn postfix(&mut self) -> Result<(Chain, K), SqlError> {
        let (mut e, mut k) = self.primary()?;
        loop {
            let item = match self.peek()?.t {
                T::Char(b'.') => {
                    self.bump()?;
                    self.dot()?
                }
                T::Char(b'[') => {
                    self.bump()?;
                    self.subscript()?
                }
                T::Char(b'?') => {
                    self.bump()?;
                    self.expect(T::Char(b'('))?;
                    self.enter()?;
                    let (p, pk) = self.or()?;
                    self.want_pred(pk)?;
                    self.expect(T::Char(b')'))?;
                    Item::Unary(UnOp::Filter, Box::new(p))
                }
                _ => return Ok((e, k)),
            };
            e.0.push(item);
            k = K::Expr;
        }
    }

    fn numeric(tok: &Token) -> Result<Numeric, SqlError> {
        Numeric::parse(&tok.val)
    }

    fn primary(&mut self) -> Result<(Chain, K), SqlError> {
        let item = match self.peek()?.t {
            T::Str => Item::String(self.bump()?.val),
            T::Keyword(Kw::Null) => {
                self.bump()?;
                Item::Null
            }
            T::Keyword(Kw::True) => {
                self.bump()?;
                Item::Bool(true)
            }
            T::Keyword(Kw::False) => {
                self.bump()?;
                Item::Bool(false)
            }
            T::Numeric | T::Int => {
                let tok = self.bump()?;
                Item::Numeric(Self::numeric(&tok)?)
            }
            T::Variable => Item::Variable(self.bump()?.val),
            T::Char(b'$') => {
                self.bump()?;
                Item::Root
            }
            T::Char(b'@') => {
                self.bump()?;
                Item::Current
            }
            T::Keyword(Kw::Last) => {
                self.bump()?;
                Item::Last
            }
            T::Char(b'(') => {
                self.bump()?;
                self.enter()?;
                let (e, k) = self.or()?;
                self.expect(T::Char(b')'))?;
                return Ok((e, if k == K::Expr { K::Expr } else { K::ParenPred }));
            }
            _ => return Err(self.error()),
        };
        Ok((single(item), K::Expr))
    }

    /// After `.`: a key, `*`, `**`, or a method.
    fn dot(&mut self) -> Result<Item, SqlError> {
        let tok = self.peek()?.clone();
        match tok.t {
            T::Char(b'*') => {
                self.bump()?;
                Ok(Item::AnyKey)
            }
            T::Any => {
                self.bump()?;
                self.any_path()
            }
            T::Ident | T::Str => {
                self.bump()?;
                Ok(Item::Key(tok.val))
            }
            T::Keyword(kw) => {
                self.bump()?;
                if kw == Kw::Datetime && self.peek()?.t == T::Char(b'(') {
                    self.bump()?;
                    let arg = match self.peek()?.t {
                        T::Str => Some(self.bump()?.val),
                        _ => None,
                    };
                    self.expect(T::Char(b')'))?;
                    return Ok(Item::Datetime(arg));
                }
                if let Some(m) = method_of(kw) {
                    if self.peek()?.t == T::Char(b'(') {
                        self.bump()?;
                        self.expect(T::Char(b')'))?;
                        return Ok(Item::Method(m));
                    }
                }
                Ok(Item::Key(tok.val))
            }
            _ => Err(self.error()),
        }
    }

    fn level(&mut self) -> Result<u32, SqlError> {
        match self.peek()?.t {
            T::Int => {
                let tok = self.bump()?;
                match tok.val.parse::<i32>() {
                    Ok(v) => Ok(v as u32),
                    Err(_) => Err(SqlError::out_of_range_input("integer", &tok.val)),
                }
            }
            T::Keyword(Kw::Last) => {
                self.bump()?;
                Ok(LAST_LEVEL)
            }
            _ => Err(self.error()),
        }
    }

    /// After `**`: optional `{level}` or `{level to level}`.
    fn any_path(&mut self) -> Result<Item, SqlError> {
        if self.peek()?.t != T::Char(b'{') {
            return Ok(Item::Any { first: 0, last: LAST_LEVEL });
        }
        self.bump()?;
        let first = self.level()?;
        let last = if self.peek()?.t == T::Keyword(Kw::To) {
            self.bump()?;
            self.level()?
        } else {
            first
        };
        self.expect(T::Char(b'}'))?;
        Ok(Item::Any { first, last })
    }

    /// After `[`: `*]` or a subscript list.
    fn subscript(&mut self) -> Result<Item, SqlError> {
        if self.peek()?.t == T::Char(b'*') {
            self.bump()?;
            self.expect(T::Char(b']'))?;
            return Ok(Item::AnyArray);
        }
        self.enter()?;
        let mut subs = Vec::new();
        loop {
            let (from, k) = self.add()?;
            self.want_expr(k)?;
            let to = if self.peek()?.t == T::Keyword(Kw::To) {
                self.bump()?;
                let (to, k) = self.add()?;
                self.want_expr(k)?;
                Some(to)
            } else {
                None
            };
            subs.push((from, to));
            match self.peek()?.t {
                T::Char(b',') => {
                    self.bump()?;
                }
                T::Char(b']') => {
                    self.bump()?;
                    break;
                }
                _ => return Err(self.error()),
            }
        }
        Ok(Item::Index(subs))
    }
}

/// PostgreSQL's checks while it flattens the parse tree, in its order:
/// `@` needs an enclosing filter, `last` an enclosing subscript.
fn check(c: &Chain, nesting: usize, in_subscript: bool) -> Result<(), SqlError> {
    // The parser bounded the depth, and this walk's frames are smaller.
    for item in &c.0 {
        match item {
            Item::Current if nesting == 0 => {
                return Err(SqlError::new(SqlState::SYNTAX_ERROR, "@ is not allowed in root expressions"))
            }
            Item::Last if !in_subscript => {
                return Err(SqlError::new(SqlState::SYNTAX_ERROR, "LAST is allowed only in array subscripts"))
            }
            Item::Binary(_, l, r) => {
                check(l, nesting, in_subscript)?;
                check(r, nesting, in_subscript)?;
            }
            Item::LikeRegex { expr, .. } => check(expr, nesting, in_subscript)?,
            Item::Unary(op, a) => check(a, nesting + usize::from(*op == UnOp::Filter), in_subscript)?,
            Item::Index(subs) => {
                for (from, to) in subs {
                    check(from, nesting, true)?;
                    if let Some(to) = to {
                        check(to, nesting, true)?;
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}
