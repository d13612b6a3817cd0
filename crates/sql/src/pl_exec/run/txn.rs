//! PL-TXN: COMMIT and ROLLBACK in a procedure or DO block.
//!
//! They end the transaction the call runs in and start the next one, the
//! call going on in it. That is only possible where nothing around the
//! call belongs to the transaction: a CALL or DO that is its own
//! transaction (the session's single-statement implicit one), or a CALL
//! made by such a procedure. The session marks the `Spi` it lends such a
//! call `nonatomic`; a function call (from an expression, a trigger)
//! clears it for its duration, as PostgreSQL's atomic SPI context does.
//! Elsewhere COMMIT fails with 2D000 "invalid transaction termination".
//!
//! A subtransaction (an EXCEPTION block) cannot be ended from inside: 2D000
//! as in PostgreSQL. Foreign-key checks put off to COMMIT run first, and a
//! failing one fails the COMMIT (its transaction is rolled back by the
//! session, as for any error). The next transaction has the default
//! isolation level, or the ended one's with AND CHAIN. A FOR loop over a
//! query goes on across a COMMIT: its rows were read before the loop.
//!
//! The session learns from `Spi::ended` that the transaction it began is
//! gone, and resets what it kept for it (deferred constraint modes).

use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;

use super::Interp;

impl Interp<'_, '_> {
    pub(super) async fn end_transaction(&mut self, rollback: bool, chain: bool) -> Result<(), SqlError> {
        let spi = &mut *self.spi;
        if !spi.nonatomic {
            return Err(SqlError::new(
                SqlState::INVALID_TRANSACTION_TERMINATION,
                "invalid transaction termination",
            ));
        }
        if spi.xact.in_subtransaction() {
            let what = if rollback { "roll back" } else { "commit" };
            return Err(SqlError::new(
                SqlState::INVALID_TRANSACTION_TERMINATION,
                format!("cannot {what} while a subtransaction is active"),
            ));
        }
        let isolation = if chain { spi.xact.isolation() } else { None }.unwrap_or(spi.default_isolation);
        spi.deferral = Default::default();
        spi.ended = true;
        if rollback {
            spi.put_off.clear();
            spi.xact.abort();
            spi.portals.aborted();
        } else {
            let pending = std::mem::take(&mut spi.put_off);
            crate::exec::run_pending(spi.xact, spi.limits, pending).await?;
            if let Err(e) = spi.xact.commit().await {
                // The commit aborted: the call fails in a transaction of
                // its own, which the session ends.
                spi.portals.aborted();
                spi.xact.begin(isolation)?;
                return Err(e);
            }
            spi.portals.committed();
        }
        spi.xact.begin(isolation)
    }
}
