//! The files one experiment leaves behind: CSV, SVG and a Markdown page.

use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::machine::Machine;
use super::plot::Figure;
use super::table::Table;
use super::utc::format_utc;

/// Where one experiment's results go: `{dir}/{name}.csv`, `.svg` and `.md`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResultSet {
    dir: PathBuf,
    name: String,
}

/// The paths [`ResultSet::write`] wrote, for the caller to print.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Written {
    /// The results table as CSV.
    pub csv: PathBuf,
    /// The figure.
    pub svg: PathBuf,
    /// The report page that links the figure and embeds the table.
    pub markdown: PathBuf,
}

impl ResultSet {
    /// Names the results of experiment `name`, to be written into `dir`.
    ///
    /// `name` becomes the file stem and the page title, so it should be a
    /// plain name such as `snapshot_scaling`: no path separators, and no
    /// spaces, which would break the page's image link.
    pub fn new(dir: &Path, name: &str) -> ResultSet {
        ResultSet { dir: dir.to_owned(), name: name.to_owned() }
    }

    /// Writes the CSV, the SVG and the Markdown page, creating `dir` if needed.
    ///
    /// The page records the time, machine and `settings` alongside the
    /// caller's `summary_markdown`, so a result can be judged without knowing
    /// how the run was started.
    ///
    /// # Errors
    ///
    /// Any failure to create the directory or write a file; a figure that
    /// fails to draw is reported as [`io::ErrorKind::Other`].
    pub fn write(
        &self,
        table: &Table,
        figure: &Figure,
        summary_markdown: &str,
        settings: &[(String, String)],
    ) -> io::Result<Written> {
        self.write_drawn(table, &|path| figure.write_svg(path), summary_markdown, settings)
    }

    /// [`ResultSet::write`] with the SVG drawn by `draw` (given the path to
    /// write), for an experiment whose picture is not a [`Figure`]: a
    /// [`super::plot::Bars`] chart of named cases.
    ///
    /// # Errors
    ///
    /// As [`ResultSet::write`].
    pub fn write_drawn(
        &self,
        table: &Table,
        draw: &dyn Fn(&Path) -> Result<(), String>,
        summary_markdown: &str,
        settings: &[(String, String)],
    ) -> io::Result<Written> {
        fs::create_dir_all(&self.dir)?;
        let written = Written { csv: self.path("csv"), svg: self.path("svg"), markdown: self.path("md") };
        table.write_csv(&written.csv)?;
        draw(&written.svg).map_err(io::Error::other)?;
        let page =
            self.page(&format_utc(SystemTime::now()), &Machine::detect(), table, summary_markdown, settings);
        fs::write(&written.markdown, page)?;
        Ok(written)
    }

    fn path(&self, extension: &str) -> PathBuf {
        self.dir.join(format!("{}.{extension}", self.name))
    }

    /// Composes the Markdown page; separate from [`ResultSet::write`] so the
    /// layout can be tested without a clock or a real machine.
    fn page(
        &self,
        date: &str,
        machine: &Machine,
        table: &Table,
        summary_markdown: &str,
        settings: &[(String, String)],
    ) -> String {
        let name = &self.name;
        let mut page = format!("# {name}\n\nMeasured {date}.\n\n## Machine\n\n");
        page.push_str(&machine.markdown());
        page.push_str("\n## Settings\n\n");
        if settings.is_empty() {
            page.push_str("_None._\n");
        }
        for (key, value) in settings {
            // Writing to a String cannot fail.
            let _ = writeln!(page, "- **{key}:** {value}");
        }
        page.push_str("\n## Results\n\n");
        let summary = summary_markdown.trim();
        if !summary.is_empty() {
            page.push_str(summary);
            page.push_str("\n\n");
        }
        let _ = write!(page, "![{name}]({name}.svg)\n\n");
        page.push_str(&table.markdown());
        page
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::plot::{Panel, Series};

    fn machine() -> Machine {
        let fact = |text: &str| text.to_owned();
        Machine {
            hostname: fact("bench-1"),
            cpu_model: fact("Test CPU"),
            logical_cpus: fact("8"),
            memory: fact("15.5 GiB"),
            kernel: fact("6.8.0"),
            rustc: fact("rustc 1.95.0"),
            profile: fact("release"),
        }
    }

    fn table() -> Table {
        let mut table = Table::new(&["sessions", "tps"]);
        table.push(vec![0_i64.into(), 1000.0.into()]);
        table.push(vec![100_i64.into(), 990.5.into()]);
        table
    }

    #[test]
    fn page_layout() {
        let results = ResultSet::new(Path::new("unused"), "scaling");
        let settings = [("duration".to_owned(), "10 s".to_owned())];
        let page =
            results.page("2026-01-02 03:04 UTC", &machine(), &table(), "Flat, as predicted.\n", &settings);
        let expected = "\
# scaling

Measured 2026-01-02 03:04 UTC.

## Machine

- **Host:** bench-1
- **CPU:** Test CPU
- **Logical CPUs:** 8
- **Memory:** 15.5 GiB
- **Kernel:** 6.8.0
- **rustc:** rustc 1.95.0
- **Build profile:** release

## Settings

- **duration:** 10 s

## Results

Flat, as predicted.

![scaling](scaling.svg)

| sessions |    tps |
| -------: | -----: |
|        0 | 1000.0 |
|      100 |  990.5 |
";
        assert_eq!(page, expected);
    }

    #[test]
    fn write_creates_all_three_files() {
        let dir = std::env::temp_dir()
            .join(format!("snapscale-results-{}-{:?}", std::process::id(), SystemTime::now()))
            .join("nested");
        let figure = Figure {
            title: "Scaling".to_owned(),
            panels: vec![Panel {
                title: "all".to_owned(),
                series: vec![Series { label: "csn".to_owned(), points: vec![(0.0, 1000.0), (100.0, 990.5)] }],
            }],
            ..Figure::default()
        };
        let written = ResultSet::new(&dir, "scaling").write(&table(), &figure, "", &[]).unwrap();
        assert_eq!(written.csv, dir.join("scaling.csv"));
        assert_eq!(written.svg, dir.join("scaling.svg"));
        assert_eq!(written.markdown, dir.join("scaling.md"));
        assert!(fs::read_to_string(&written.csv).unwrap().starts_with("sessions,tps\n"));
        assert!(fs::read_to_string(&written.svg).unwrap().contains("csn"));
        let page = fs::read_to_string(&written.markdown).unwrap();
        assert!(page.starts_with("# scaling\n\nMeasured "));
        assert!(page.contains("_None._"));
        assert!(page.contains("![scaling](scaling.svg)"));
        fs::remove_dir_all(dir.parent().unwrap()).unwrap();
    }
}
