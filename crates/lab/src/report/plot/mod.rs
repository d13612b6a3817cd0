//! Line charts of an experiment's results, written as SVG.
//!
//! A [`Figure`] is a grid of [`Panel`]s that share an x axis, each a line
//! chart of several [`Series`]. SVG keeps the output diffable and viewable in
//! any browser, and plotters' SVG backend writes text as `<text>` elements,
//! so no font files are needed to label it.

mod axis;
mod bars;
mod colours;
mod legend;

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use axis::{Axis, Scale};
pub use bars::Bars;
use colours::ColourKey;

/// Panels per row: more would make each too narrow to read.
const MAX_COLUMNS: usize = 3;
/// Size of one panel in SVG pixels.
const PANEL_SIZE: (u32, u32) = (480, 360);
/// Height reserved above the panels for the figure's title.
const TITLE_HEIGHT: u32 = 40;
/// Radius of a point's marker in SVG pixels.
const MARKER_RADIUS: u32 = 3;
/// Font size of tick labels and legend entries.
const SMALL_FONT: u32 = 13;

/// One line: a variant's measurements, drawn in order of x.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Series {
    /// Legend text; series with the same label get the same colour in
    /// every panel. An empty label keeps the series out of the legend.
    pub label: String,
    /// `(x, y)` points. Points the axes cannot show (not finite, or not
    /// positive on a log axis) are skipped.
    pub points: Vec<(f64, f64)>,
}

/// One chart within a figure.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Panel {
    /// Caption above the chart.
    pub title: String,
    /// The lines to draw.
    pub series: Vec<Series>,
}

/// A titled grid of charts with common axis labels and scales.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Figure {
    /// Caption above the whole figure; empty for none.
    pub title: String,
    /// Label under every panel's x axis.
    pub x_label: String,
    /// Label beside every panel's y axis.
    pub y_label: String,
    /// Logarithmic x axis that can still show x = 0.
    ///
    /// A true log axis has no place for zero, but snapscale's experiments
    /// start at "0 idle sessions". So the x axis uses the symlog transform
    /// `log10(x + 1)`: 0 lands one decade left of 10, and from 10 upwards
    /// positions are within 0.05 decades of a true log axis. Ticks are placed
    /// and labelled at the original values (0, 10, 100, 1000, …). Negative x
    /// values are skipped.
    pub x_log: bool,
    /// Plain log10 y axis with a tick at every decade; points with y ≤ 0
    /// are skipped.
    pub y_log: bool,
    /// The charts, laid out left to right, then top to bottom, at most
    /// three per row.
    pub panels: Vec<Panel>,
}

impl Figure {
    /// Draws the figure as an SVG file at `path`, replacing any existing file.
    ///
    /// All panels share one x range so they can be compared column by
    /// column; each panel fits its own y range because different workloads
    /// can differ by orders of magnitude. A linear y axis always includes 0.
    ///
    /// # Errors
    ///
    /// A description of the failure, including the path, if drawing or
    /// writing the file fails (for example, a missing directory).
    pub fn write_svg(&self, path: &Path) -> Result<(), String> {
        let fail = |e: DrawingAreaErrorKind<std::io::Error>| format!("{}: {e}", path.display());
        let columns = self.panels.len().clamp(1, MAX_COLUMNS);
        let rows = self.panels.len().div_ceil(columns).max(1);
        let title_height = if self.title.is_empty() { 0 } else { TITLE_HEIGHT };
        let size = (PANEL_SIZE.0 * columns as u32, PANEL_SIZE.1 * rows as u32 + title_height);

        let root = SVGBackend::new(path, size).into_drawing_area();
        root.fill(&WHITE).map_err(fail)?;
        let body = if self.title.is_empty() {
            root.clone()
        } else {
            root.titled(&self.title, ("sans-serif", 24)).map_err(fail)?
        };

        let (x_scale, y_scale) = self.scales();
        let all_points = || self.panels.iter().flat_map(|p| &p.series).flat_map(|s| &s.points);
        let x_axis = Axis::fit(x_scale, all_points().map(|&(x, _)| x), false);
        let colours = ColourKey::new(self.panels.iter().flat_map(|p| &p.series).map(|s| s.label.as_str()));

        for (area, panel) in body.split_evenly((rows, columns)).iter().zip(&self.panels) {
            let y_axis =
                Axis::fit(y_scale, panel.series.iter().flat_map(|s| &s.points).map(|&(_, y)| y), !self.y_log);
            self.draw_panel(area, panel, &x_axis, &y_axis, &colours).map_err(fail)?;
        }
        root.present().map_err(fail)
    }

    /// The x and y scales the `x_log` and `y_log` flags ask for.
    fn scales(&self) -> (Scale, Scale) {
        let x = if self.x_log { Scale::Symlog } else { Scale::Linear };
        let y = if self.y_log { Scale::Log } else { Scale::Linear };
        (x, y)
    }

    /// Draws one panel's axes, lines and legend into `area`.
    fn draw_panel(
        &self,
        area: &DrawingArea<SVGBackend<'_>, Shift>,
        panel: &Panel,
        x_axis: &Axis,
        y_axis: &Axis,
        colours: &ColourKey,
    ) -> Result<(), DrawingAreaErrorKind<std::io::Error>> {
        let (x_scale, y_scale) = self.scales();
        let mut chart = ChartBuilder::on(area)
            .caption(&panel.title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(x_axis.clone(), y_axis.clone())?;
        chart
            .configure_mesh()
            .x_desc(&self.x_label)
            .y_desc(&self.y_label)
            .label_style(("sans-serif", SMALL_FONT))
            .axis_desc_style(("sans-serif", 14))
            .bold_line_style(BLACK.mix(0.15))
            .light_line_style(BLACK.mix(0.05))
            .draw()?;

        // Each drawn line as fractions of the plotting area, for the legend.
        let mut lines = Vec::new();
        for series in &panel.series {
            let colour = colours.colour(&series.label);
            let mut points: Vec<(f64, f64)> = series
                .points
                .iter()
                .copied()
                .filter(|&(x, y)| x_scale.accepts(x) && y_scale.accepts(y))
                .collect();
            // A line chart reads left to right whatever order results came in.
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            lines.push(points.iter().map(|&(x, y)| (x_axis.fraction(x), y_axis.fraction(y))).collect());
            let line = chart.draw_series(LineSeries::new(points.iter().copied(), colour.stroke_width(2)))?;
            if !series.label.is_empty() {
                line.label(&series.label).legend(move |(x, y)| {
                    EmptyElement::at((x, y))
                        + PathElement::new(vec![(0, 0), (20, 0)], colour.stroke_width(2))
                        + Circle::new((10, 0), MARKER_RADIUS, colour.filled())
                });
            }
            chart.draw_series(
                points.iter().map(|&point| Circle::new(point, MARKER_RADIUS, colour.filled())),
            )?;
        }

        let labels: Vec<&str> =
            panel.series.iter().map(|s| s.label.as_str()).filter(|label| !label.is_empty()).collect();
        if labels.is_empty() {
            return Ok(());
        }
        let corner =
            legend::emptiest_corner(&lines, legend_size(&labels, chart.plotting_area().dim_in_pixel()));
        chart
            .configure_series_labels()
            .position(corner.position())
            .label_font(("sans-serif", SMALL_FONT))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.3))
            .draw()?;
        Ok(())
    }
}

/// Roughly how much of a plotting area of `plot` pixels a legend listing
/// `labels` takes, as (width, height) fractions.
///
/// Without font metrics this can only estimate, and erring large is
/// cheaper than hiding a line: about 0.6 em per character plus the line
/// sample, margins and the gap plotters leaves to the frame; a line and a
/// half of text per entry.
fn legend_size(labels: &[&str], plot: (u32, u32)) -> (f64, f64) {
    let longest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    let font = f64::from(SMALL_FONT);
    let width = longest as f64 * 0.6 * font + 60.0;
    let height = labels.len() as f64 * 1.5 * font + 30.0;
    ((width / f64::from(plot.0.max(1))).min(1.0), (height / f64::from(plot.1.max(1))).min(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::path::PathBuf;

    /// A directory of its own for each test, so parallel tests never collide.
    fn scratch_dir(test: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "snapscale-plot-{test}-{}-{:?}",
            std::process::id(),
            std::time::SystemTime::now()
        ));
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn series(label: &str, points: &[(f64, f64)]) -> Series {
        Series { label: label.to_owned(), points: points.to_vec() }
    }

    #[test]
    fn svg_holds_titles_labels_and_ticks() {
        let sessions = [0.0, 10.0, 100.0, 1000.0, 10_000.0];
        let figure = Figure {
            title: "Snapshot cost vs idle sessions".to_owned(),
            x_label: "idle sessions".to_owned(),
            y_label: "ns per snapshot".to_owned(),
            x_log: true,
            y_log: true,
            panels: vec![
                Panel {
                    title: "read-only".to_owned(),
                    series: vec![
                        series("baseline", &sessions.map(|x| (x, 50.0 + x * 3.0))),
                        series("csn <new>", &sessions.map(|x| (x, 40.0))),
                    ],
                },
                Panel {
                    title: "read-write".to_owned(),
                    series: vec![series("csn <new>", &sessions.map(|x| (x, 45.0)))],
                },
            ],
        };
        let dir = scratch_dir("svg");
        let path = dir.join("figure.svg");
        figure.write_svg(&path).unwrap();
        let svg = fs::read_to_string(&path).unwrap();
        for text in [
            "Snapshot cost vs idle sessions",
            "read-only",
            "read-write",
            "baseline",
            "csn &lt;new&gt;",
            "idle sessions",
            "ns per snapshot",
            "10000",
        ] {
            assert!(svg.contains(text), "missing {text:?}");
        }
        // One colour per label: "csn <new>" is orange in both panels.
        assert!(svg.matches("#FF7F0E").count() >= 2 * sessions.len());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn many_panels_wrap_into_rows() {
        let panels = (0..4)
            .map(|i| Panel {
                title: format!("panel {i}"),
                series: vec![series("", &[(1.0, 1.0), (2.0, 4.0)])],
            })
            .collect();
        let figure = Figure { panels, ..Figure::default() };
        let dir = scratch_dir("grid");
        let path = dir.join("grid.svg");
        figure.write_svg(&path).unwrap();
        let svg = fs::read_to_string(&path).unwrap();
        assert!(svg.contains(r#"width="1440" height="720""#), "{}", &svg[..200]);
        assert!(svg.contains("panel 3"));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn missing_directory_is_an_error() {
        let path = scratch_dir("missing").join("no/such/dir/figure.svg");
        let error = Figure::default().write_svg(&path).unwrap_err();
        assert!(error.contains("figure.svg"), "{error}");
    }
}
