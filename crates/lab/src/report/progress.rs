//! A progress bar for long experiments that stays silent when not watched.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Layout of the bar: what runs, how far along, the current step, time left.
const TEMPLATE: &str = "{prefix} [{bar:40}] {pos}/{len} {wide_msg} ({eta})";

/// Progress through a known number of steps, drawn on stderr.
///
/// Experiments run for minutes, so someone at a terminal wants to see them
/// move; but when output goes to a file or CI log, redraw escape codes would
/// only be noise. indicatif's stderr target hides itself when stderr is not a
/// terminal (or `TERM` is unset or `dumb`), so this prints nothing there.
#[derive(Debug)]
pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    /// Starts a bar of `total` steps labelled `what`.
    pub fn new(total: u64, what: &str) -> Progress {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        // The template is a constant, so failing to parse it is a bug in
        // this file; falling back to indicatif's default bar is still better
        // than panicking in the middle of an experiment.
        if let Ok(style) = ProgressStyle::with_template(TEMPLATE) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_prefix(what.to_owned());
        Progress { bar }
    }

    /// Records one finished step; `msg` names the step that just finished.
    pub fn inc(&self, msg: &str) {
        self.bar.set_message(msg.to_owned());
        self.bar.inc(1);
    }

    /// Marks the work as done, leaving the completed bar on screen.
    pub fn finish(&self) {
        self.bar.finish();
    }

    /// Whether the bar is invisible because stderr is not a terminal.
    pub fn is_hidden(&self) -> bool {
        self.bar.is_hidden()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::IsTerminal;

    #[test]
    fn counts_steps_and_hides_off_terminal() {
        let progress = Progress::new(3, "test");
        // indicatif also hides the bar for `TERM=dumb`, so only the
        // non-terminal direction is guaranteed.
        if !std::io::stderr().is_terminal() {
            assert!(progress.is_hidden());
        }
        progress.inc("one");
        progress.inc("two");
        progress.inc("three");
        progress.finish();
        assert_eq!(progress.bar.position(), 3);
    }
}
