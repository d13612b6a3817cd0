//! Bounded recursion: PostgreSQL's `check_stack_depth`, and big statements
//! parsed and dropped on a stack of their own.
//!
//! The binder and the evaluator recurse over expressions, so a deep enough
//! input would overflow the thread's stack, which aborts the whole process.
//! Each synchronous recursion therefore starts from a [`StackDepth`] taken
//! at its root, and every recursive step asks it whether the stack used
//! since the root exceeds the session's `max_stack_depth`; past it the
//! statement fails with 54001, as in PostgreSQL. The measure is the
//! distance between two stack addresses of one thread, so a `StackDepth`
//! is `!Send`: a future that held one across an `.await` (and could resume
//! on another thread, where the distance means nothing) does not compile.
//!
//! The threads that run statements must have at least `max_stack_depth`
//! plus [`STACK_RESERVE`] of stack (the server's runtime is built with
//! [`STATEMENT_THREAD_STACK`]); `max_stack_depth` is refused above that.
//!
//! Long flat chains (`a + b + c …`, `x = 1 OR x = 2 OR …`) are not deep: the
//! binder folds them iteratively into flat nodes (see `expr.rs`). What it
//! cannot fold is sqlparser's own tree for them, which sqlparser builds
//! iteratively but drops recursively. A statement whose source text is long
//! enough to hold such a chain is therefore parsed, and later dropped, on a
//! stack sized from its length ([`BigStack`]).

use std::marker::PhantomData;

use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;

/// PostgreSQL's default `max_stack_depth`.
pub const DEFAULT_MAX_STACK_DEPTH: usize = 2 << 20;

/// Stack of the threads that run statements (the server's runtime).
pub const STATEMENT_THREAD_STACK: usize = 16 << 20;

/// Stack a statement thread keeps beyond `max_stack_depth`: what the runtime
/// and the connection's task use above the statement's roots, and what a
/// step may use between two checks (PostgreSQL keeps 512kB of slop).
pub const STACK_RESERVE: usize = 1 << 20;

/// The largest `max_stack_depth` a statement thread can honour.
pub const MAX_MAX_STACK_DEPTH: usize = STATEMENT_THREAD_STACK - STACK_RESERVE;

/// Where one synchronous recursion started, and how deep it may go.
#[derive(Clone, Copy)]
pub struct StackDepth {
    base: usize,
    max: usize,
    /// A stack address means nothing on another thread.
    _one_thread: PhantomData<*const ()>,
}

/// An address in the current stack frame.
#[inline(always)]
fn stack_pointer() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

/// Where the current thread's stack is now: with [`used_since`], a measure
/// that may be kept across an `.await` (PL/pgSQL's nested calls, whose
/// futures are polled through one another on one thread).
pub fn mark() -> (std::thread::ThreadId, usize) {
    (std::thread::current().id(), stack_pointer())
}

/// Stack used since `mark` on this thread; `None` on another thread (a
/// task that moved), where the distance means nothing.
pub fn used_since(mark: (std::thread::ThreadId, usize)) -> Option<usize> {
    (std::thread::current().id() == mark.0).then(|| mark.1.saturating_sub(stack_pointer()))
}

impl std::fmt::Debug for StackDepth {
    /// How much is used now, against what is allowed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StackDepth {{ used: {}, max: {} }}", self.base.saturating_sub(stack_pointer()), self.max)
    }
}

impl StackDepth {
    /// A root here, allowing `max` bytes of stack below it.
    #[inline]
    pub fn here(max: usize) -> StackDepth {
        StackDepth { base: stack_pointer(), max, _one_thread: PhantomData }
    }

    /// The bytes of stack allowed below the root (`max_stack_depth`).
    pub fn limit(&self) -> usize {
        self.max
    }

    /// 54001 if the stack has grown more than `max` bytes since the root.
    /// Stacks grow downwards on every target Rust's tier-1 list supports.
    #[inline]
    pub fn check(&self) -> Result<(), SqlError> {
        if self.base.saturating_sub(stack_pointer()) > self.max {
            return Err(too_deep(self.max));
        }
        Ok(())
    }
}

/// 54001, worded as PostgreSQL words it.
pub fn too_deep(max: usize) -> SqlError {
    SqlError::new(SqlState::STATEMENT_TOO_COMPLEX, "stack depth limit exceeded").with_hint(format!(
        "Increase the configuration parameter \"max_stack_depth\" (currently {}kB), after ensuring the \
         platform's stack depth limit is adequate.",
        max >> 10
    ))
}

/// sqlparser's recursion limit for a given `max_stack_depth`: one level per
/// 128 bytes (16 384 at the default, past PostgreSQL's grammar, which stops
/// near 10 000 nested parentheses). sqlparser is given a stack for all of
/// its recursion ([`BigStack::for_parse`]), so this bounds that stack (and
/// the memory its tree takes), not the thread's; statements that would
/// pass it are refused before sqlparser sees them (the nesting module).
pub fn parser_depth(max_stack_depth: usize) -> usize {
    (max_stack_depth / 128).max(64)
}

/// Source text longer than this is parsed and dropped on a [`BigStack`]; a
/// shorter one cannot hold a chain whose drop overflows what the thread has
/// left (measured below 128 bytes of stack per byte of source). The server
/// also parses such a statement with its runtime worker handed to the other
/// tasks: its parse may take seconds (see the nesting module).
pub const BIG_STATEMENT: usize = 8 << 10;

/// Stack needed per byte of source to drop sqlparser's tree of it.
const STACK_PER_BYTE: usize = 128;

/// Stack sqlparser's recursion takes per level of nesting as the nesting
/// module measures it: at most about 15kB in a release build and
/// 90kB unoptimised (a function's arguments, a CASE), with a margin.
const PARSE_STACK_PER_LEVEL: usize = if cfg!(debug_assertions) { 128 << 10 } else { 24 << 10 };

/// The most a statement's parse may take of a statement thread's own stack.
const THREAD_PARSE_STACK: usize = STATEMENT_THREAD_STACK / 2;

/// A stack size for work on a statement of `len` bytes, or `None` if the
/// thread's own stack suffices.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BigStack(Option<usize>);

impl BigStack {
    /// What a statement of `len` bytes of source needs to be dropped.
    pub fn for_source(len: usize) -> BigStack {
        BigStack((len > BIG_STATEMENT).then(|| STACK_RESERVE + len.saturating_mul(STACK_PER_BYTE)))
    }

    /// What parsing a statement of `len` bytes nested `depth` levels deep
    /// needs: all of sqlparser's recursion, and below its deepest point the
    /// drop of the longest chain the text can hold. sqlparser drops the
    /// trees of the alternatives it abandons deep in its recursion. Where
    /// the stack runs short it goes on, level by level, on stacks of its
    /// own with only 128kB sure to be left (the `recursive` crate), and a
    /// long chain dropped there overflowed it (a SIGSEGV that took the
    /// server down: 3 000 parentheses around a failing CASE over a 30 000
    /// term sum).
    pub fn for_parse(len: usize, depth: usize) -> BigStack {
        let need =
            len.saturating_mul(STACK_PER_BYTE).saturating_add(depth.saturating_mul(PARSE_STACK_PER_LEVEL));
        BigStack(
            (len > BIG_STATEMENT || need > THREAD_PARSE_STACK).then(|| STACK_RESERVE.saturating_add(need)),
        )
    }

    /// Runs `f` on a stack of this size (a fresh mapping, released after).
    pub fn run<R>(self, f: impl FnOnce() -> R) -> R {
        match self.0 {
            None => f(),
            Some(size) => stacker::grow(size, f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recurse(depth: &StackDepth, n: usize) -> Result<usize, SqlError> {
        depth.check()?;
        let pad = std::hint::black_box([0u8; 256]);
        if n == 0 {
            return Ok(pad[0] as usize);
        }
        Ok(recurse(depth, n - 1)? + pad[1] as usize + 1)
    }

    #[test]
    fn the_limit_is_bytes_of_stack_below_the_root() {
        let depth = StackDepth::here(64 << 10);
        assert_eq!(recurse(&depth, 10).unwrap(), 10);
        let err = recurse(&depth, 100_000).unwrap_err();
        assert_eq!(err.code, "54001");
        assert!(err.hint.as_ref().unwrap().contains("currently 64kB"));
    }

    #[test]
    fn big_statements_get_a_stack_of_their_own() {
        assert_eq!(BigStack::for_source(100), BigStack(None));
        assert_eq!(BigStack::for_parse(100, 10), BigStack(None));
        assert!(BigStack::for_parse(4000, 4000).0.is_some_and(|s| s > 4000 * PARSE_STACK_PER_LEVEL));
        let big = BigStack::for_source(1 << 20);
        assert_eq!(big.run(|| 7), 7);
    }
}
