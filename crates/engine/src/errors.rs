//! The errors of the layers below as the error report a statement fails
//! with: each lower crate's error enum names its SQLSTATE (`sqlstate()`)
//! and its message (`Display`); a deadlock adds PostgreSQL's DETAIL.

use snapscale_lock::LockError;
use snapscale_storage::log::LogError;
use snapscale_storage::StorageError;
use snapscale_txn::TxnError;
use snapscale_values::SqlError;

/// A transaction-core error.
pub fn txn_error(e: TxnError) -> SqlError {
    SqlError::new(e.sqlstate(), e.to_string())
}

/// A WAL device error.
pub fn log_error(e: LogError) -> SqlError {
    SqlError::new(e.sqlstate(), e.to_string())
}

/// A lock manager error, with the deadlock's DETAIL.
pub fn lock_error(e: LockError) -> SqlError {
    let mut err = SqlError::new(e.sqlstate(), e.to_string());
    err.detail = e.detail().map(str::to_owned);
    err
}

/// A storage error.
pub fn storage_error(e: StorageError) -> SqlError {
    SqlError::new(e.sqlstate(), e.to_string())
}
