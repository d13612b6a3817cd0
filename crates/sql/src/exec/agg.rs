//! Aggregates: each one's running state over a group's rows.

use snapscale_values::{SqlError, SqlType, Value};

use crate::expr::{compare, AggFunc};

/// One aggregate's running state.
#[derive(Default)]
pub(super) struct Acc {
    count: i64,
    int_sum: i128,
    float_sum: f64,
    extreme: Option<Value>,
    /// array_agg's values, string_agg's text.
    items: Vec<Value>,
    text: Option<String>,
    /// `agg(x ORDER BY …)`: each row's sort keys, value and delimiter,
    /// fed in order when the group is complete.
    deferred: Vec<(Vec<Value>, Value, Option<Value>)>,
}

impl Acc {
    /// Keeps a row's value for an ordered aggregate.
    pub(super) fn defer(&mut self, keys: Vec<Value>, v: Value, delimiter: Option<Value>) {
        self.deferred.push((keys, v, delimiter));
    }

    /// The values kept by `defer`.
    pub(super) fn take_deferred(&mut self) -> Vec<(Vec<Value>, Value, Option<Value>)> {
        std::mem::take(&mut self.deferred)
    }

    /// Adds a row's value (and string_agg's delimiter for it).
    pub(super) fn add(&mut self, func: AggFunc, v: Value, delimiter: Option<Value>) -> Result<(), SqlError> {
        if func == AggFunc::ArrayAgg {
            self.count += 1;
            self.items.push(v);
            return Ok(());
        }
        if matches!(v, Value::Null) {
            return Ok(());
        }
        self.count += 1;
        match func {
            AggFunc::CountStar | AggFunc::Count => {}
            AggFunc::Sum | AggFunc::Avg => match v {
                Value::Int(i) => {
                    self.int_sum += i128::from(i);
                    self.float_sum += i as f64;
                }
                Value::Float(f) => self.float_sum += f,
                _ => {}
            },
            AggFunc::StringAgg => {
                let piece = v.to_text().unwrap_or_default();
                match &mut self.text {
                    None => self.text = Some(piece),
                    Some(t) => {
                        if let Some(Value::Text(d)) = delimiter {
                            t.push_str(&d);
                        }
                        t.push_str(&piece);
                    }
                }
            }
            AggFunc::ArrayAgg => unreachable!("handled above"),
            AggFunc::BoolAnd | AggFunc::BoolOr => {
                let b = matches!(v, Value::Bool(true));
                let acc = matches!(self.extreme, Some(Value::Bool(true)));
                let next = match (&self.extreme, func) {
                    (None, _) => b,
                    (_, AggFunc::BoolAnd) => acc && b,
                    _ => acc || b,
                };
                self.extreme = Some(Value::Bool(next));
            }
            AggFunc::Min | AggFunc::Max => {
                let replace = match &self.extreme {
                    None => true,
                    Some(cur) => {
                        let o = compare(&v, cur, true)?;
                        if func == AggFunc::Min {
                            o.is_lt()
                        } else {
                            o.is_gt()
                        }
                    }
                };
                if replace {
                    self.extreme = Some(v);
                }
            }
        }
        Ok(())
    }

    /// The aggregate's value so far (a window's running aggregate).
    pub(super) fn snapshot(&self, func: AggFunc, ty: SqlType) -> Result<Value, SqlError> {
        Acc {
            count: self.count,
            int_sum: self.int_sum,
            float_sum: self.float_sum,
            extreme: self.extreme.clone(),
            items: self.items.clone(),
            text: self.text.clone(),
            // A window's aggregates are never ordered within (refused at
            // bind time).
            deferred: Vec::new(),
        }
        .finish(func, ty)
    }

    pub(super) fn finish(self, func: AggFunc, ty: SqlType) -> Result<Value, SqlError> {
        Ok(match func {
            AggFunc::CountStar | AggFunc::Count => Value::Int(self.count),
            _ if self.count == 0 => Value::Null,
            AggFunc::Sum if ty == SqlType::Int8 => {
                Value::Int(i64::try_from(self.int_sum).map_err(|_| SqlError::out_of_range("bigint"))?)
            }
            AggFunc::Sum => Value::Float(self.float_sum),
            AggFunc::Avg => Value::Float(self.float_sum / self.count as f64),
            AggFunc::Min | AggFunc::Max | AggFunc::BoolAnd | AggFunc::BoolOr => {
                self.extreme.unwrap_or(Value::Null)
            }
            AggFunc::StringAgg => self.text.map_or(Value::Null, Value::Text),
            AggFunc::ArrayAgg => Value::Array(self.items.into()),
        })
    }
}
