//! COPY FROM STDIN in a session: the rows arrive in CopyData messages,
//! between the statement's start and CopyDone.

use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;

use super::{Conn, Gucs};
use crate::exec::Executor;
use crate::output::Output;

impl<G: Gucs> Conn<G> {
    /// COPY FROM STDIN data.
    pub async fn copy_data(&mut self, data: &[u8]) -> Result<(), SqlError> {
        let mut result = self.copy_step(Some(data)).await;
        // What is left is one unfinished row: bounded like a message, so a
        // client cannot grow it without end.
        let limit = self.limits.max_message_size;
        if let (Ok(()), Some(copy)) = (&result, &self.copy) {
            if copy.pending.len() > limit {
                result = Err(SqlError::new(SqlState::PROGRAM_LIMIT_EXCEEDED, "COPY row is too long")
                    .with_detail(format!("A row of COPY data exceeds max_message_size ({limit} bytes).")));
            }
        }
        if result.is_err() {
            self.fail();
        }
        result
    }

    /// End of COPY FROM STDIN data.
    pub async fn copy_done(&mut self) -> Result<Output, SqlError> {
        let result = match self.copy_step(None).await {
            Ok(()) => {
                let copy = self.copy.take().expect("a COPY is in progress");
                self.xact.end_statement().map(|()| Output::Command(format!("COPY {}", copy.rows)))
            }
            Err(e) => Err(e),
        };
        if result.is_err() {
            self.fail();
        }
        result
    }

    /// The client gave up the COPY.
    pub fn copy_fail(&mut self, message: &str) -> SqlError {
        self.fail();
        SqlError::new(SqlState::QUERY_CANCELED, format!("COPY from stdin failed: {message}"))
    }

    /// True while a COPY FROM STDIN is in progress.
    pub fn copying(&self) -> bool {
        self.copy.is_some()
    }

    /// Adds `data` (or, with `None`, ends the data) and inserts the rows it
    /// completes.
    async fn copy_step(&mut self, data: Option<&[u8]>) -> Result<(), SqlError> {
        let Some(copy) = self.copy.as_mut() else {
            return Err(SqlError::new(SqlState::PROTOCOL_VIOLATION, "unexpected COPY data"));
        };
        if let Some(data) = data {
            copy.pending.extend_from_slice(data);
        }
        let mut host = crate::pl_exec::trigger::Host::new(
            self.limits,
            self.gucs.planner(),
            self.block == super::Block::Open,
            self.deferral.clone(),
            0,
            (&mut self.pl_functions, &mut self.portals),
            crate::stack::mark(),
        );
        let mut exec = Executor::new(&mut self.xact, self.limits, &[], false, copy.waits);
        exec.triggers = Some(&mut host);
        let copied = exec.copy_lines(copy, data.is_none()).await;
        drop(exec);
        self.pending.append(&mut host.put_off);
        copied
    }
}
