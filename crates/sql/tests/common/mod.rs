//! What several of this crate's integration tests share.

/// A single-threaded runtime whose threads have the stack statements need
/// (`max_stack_depth`).
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .thread_stack_size(snapscale_sql::stack::STATEMENT_THREAD_STACK)
        .enable_all()
        .build()
        .unwrap()
}
