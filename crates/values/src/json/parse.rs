//! The JSON grammar, driven without recursion so that nesting depth can
//! never overflow the Rust stack.
//!
//! PostgreSQL parses recursively and stops deep input with a stack check
//! (54001 `stack depth limit exceeded`). We keep an explicit stack and
//! charge each open container against a budget calibrated on PostgreSQL 15
//! with the default `max_stack_depth` of 2MB: 14545 nested arrays or 13090
//! nested objects are accepted, one more is refused. What to do with the
//! parsed pieces is up to a [`Sink`]: validating `json`, building a
//! [`Jsonb`](super::Jsonb), or indexing json text for the json functions.

use snapscale_sqlstate::SqlState;

use super::lexer::{Expect, Lexer, Tok};
use crate::SqlError;

/// Budget units an open array costs.
const ARRAY_COST: usize = 9;
/// Budget units an open object costs.
const OBJECT_COST: usize = 10;
/// Total budget: as deep as PostgreSQL 15 goes with a 2MB stack.
const DEPTH_BUDGET: usize = 130_905;
/// The max_stack_depth [`DEPTH_BUDGET`] was measured at.
const MEASURED_AT: usize = 2 * 1024 * 1024;

thread_local! {
    /// The max_stack_depth of the statement running on this thread (in
    /// bytes), which the budget scales with; set by the statement's
    /// executor ([`set_max_stack_depth`]). A statement that moved threads
    /// at a wait may read another session's, which differs only where a
    /// session SET it.
    static MAX_STACK_DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(MEASURED_AT) };
}

/// The max_stack_depth JSON input on this thread is held to.
pub fn set_max_stack_depth(bytes: usize) {
    MAX_STACK_DEPTH.set(bytes.max(1));
}

fn depth_budget() -> usize {
    (DEPTH_BUDGET as u128 * MAX_STACK_DEPTH.get() as u128 / MEASURED_AT as u128) as usize
}

/// 54001: what PostgreSQL reports when input nests too deeply.
pub(crate) fn stack_depth_error() -> SqlError {
    let kb = MAX_STACK_DEPTH.get() / 1024;
    SqlError::new(SqlState::STATEMENT_TOO_COMPLEX, "stack depth limit exceeded").with_hint(format!(
        "Increase the configuration parameter \"max_stack_depth\" (currently {kb}kB), after ensuring the platform's stack depth limit is adequate."
    ))
}

/// A scalar token handed to a [`Sink`].
pub(crate) struct Scalar<'a> {
    pub tok: Tok,
    /// The token as written (for strings, with quotes and escapes).
    pub raw: &'a str,
    /// A string's de-escaped value, when the parse de-escapes.
    pub string: Option<String>,
    pub start: usize,
    pub end: usize,
}

/// Receives the parse as a stream of events.
pub(crate) trait Sink {
    /// A container opens at byte `start`.
    fn begin(&mut self, object: bool, start: usize) -> Result<(), SqlError>;
    /// The innermost open container closes; `end` is one past its `}`/`]`.
    fn end(&mut self, end: usize) -> Result<(), SqlError>;
    /// An object key (de-escaped when the parse de-escapes, else raw).
    fn key(&mut self, key: String) -> Result<(), SqlError>;
    /// A scalar value.
    fn scalar(&mut self, s: Scalar<'_>) -> Result<(), SqlError>;
}

/// A sink that only validates.
pub(crate) struct Validate;

impl Sink for Validate {
    fn begin(&mut self, _: bool, _: usize) -> Result<(), SqlError> {
        Ok(())
    }
    fn end(&mut self, _: usize) -> Result<(), SqlError> {
        Ok(())
    }
    fn key(&mut self, _: String) -> Result<(), SqlError> {
        Ok(())
    }
    fn scalar(&mut self, _: Scalar<'_>) -> Result<(), SqlError> {
        Ok(())
    }
}

enum State {
    Value,
    AfterValue,
    Field,
}

/// Parses `input` into `sink`. With `de_escape`, string escapes are
/// decoded (and `\u0000` and bad surrogates rejected), as PostgreSQL does
/// wherever it needs string values; without, they are only checked for
/// form, as `json_in` does.
pub(crate) fn parse(input: &str, de_escape: bool, sink: &mut impl Sink) -> Result<(), SqlError> {
    let mut lex = Lexer::new(input, de_escape);
    // true = object
    let mut stack: Vec<bool> = Vec::new();
    let mut used = 0usize;
    let budget = depth_budget();
    lex.next()?;
    let mut state = State::Value;
    loop {
        match state {
            State::Value => match lex.tok {
                Tok::ObjectStart | Tok::ArrayStart => {
                    let object = lex.tok == Tok::ObjectStart;
                    used += if object { OBJECT_COST } else { ARRAY_COST };
                    if used > budget {
                        return Err(stack_depth_error());
                    }
                    sink.begin(object, lex.token_start)?;
                    stack.push(object);
                    lex.next()?;
                    if object {
                        match lex.tok {
                            Tok::String => state = State::Field,
                            Tok::ObjectEnd => state = State::AfterValue,
                            _ => return Err(lex.unexpected(Expect::ObjectStart)),
                        }
                    } else if lex.tok == Tok::ArrayEnd {
                        state = State::AfterValue;
                    }
                }
                Tok::String | Tok::Number | Tok::True | Tok::False | Tok::Null => {
                    let tok = lex.tok;
                    let (start, end) = (lex.token_start, lex.token_end);
                    let raw = &input[start..end];
                    let string = if tok == Tok::String && de_escape {
                        Some(std::mem::take(&mut lex.strval))
                    } else {
                        None
                    };
                    lex.next()?;
                    sink.scalar(Scalar { tok, raw, string, start, end })?;
                    state = State::AfterValue;
                }
                _ => return Err(lex.unexpected(Expect::Value)),
            },
            State::AfterValue => {
                // A container just opened and found its closer immediately
                // comes here too: the closer is the current token.
                match stack.last() {
                    None => {
                        if lex.tok != Tok::End {
                            return Err(lex.unexpected(Expect::End));
                        }
                        return Ok(());
                    }
                    Some(&object) => {
                        let closer = if object { Tok::ObjectEnd } else { Tok::ArrayEnd };
                        if lex.tok == Tok::Comma {
                            lex.next()?;
                            state = if object { State::Field } else { State::Value };
                        } else if lex.tok == closer {
                            let end = lex.token_end;
                            lex.next()?;
                            stack.pop();
                            used -= if object { OBJECT_COST } else { ARRAY_COST };
                            sink.end(end)?;
                        } else {
                            return Err(lex.unexpected(if object {
                                Expect::ObjectNext
                            } else {
                                Expect::ArrayNext
                            }));
                        }
                    }
                }
            }
            State::Field => {
                if lex.tok != Tok::String {
                    return Err(lex.unexpected(Expect::String));
                }
                let key =
                    if de_escape { std::mem::take(&mut lex.strval) } else { lex.token_text().to_owned() };
                lex.next()?;
                if lex.tok != Tok::Colon {
                    return Err(lex.unexpected(Expect::ObjectLabel));
                }
                lex.next()?;
                sink.key(key)?;
                state = State::Value;
            }
        }
    }
}

/// json_in's check: `input` is valid json (escapes checked for form only).
pub(crate) fn validate(input: &str) -> Result<(), SqlError> {
    parse(input, false, &mut Validate)
}
