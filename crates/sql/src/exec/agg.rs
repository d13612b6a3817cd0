//! Aggregates: each one's running state over a group's rows.

use crate::error::SqlError;
use crate::expr::{compare, AggFunc};
use crate::types::{SqlType, Value};

/// One aggregate's running state.
#[derive(Default)]
pub(super) struct Acc {
    count: i64,
    int_sum: i128,
    float_sum: f64,
    extreme: Option<Value>,
}

impl Acc {
    pub(super) fn add(&mut self, func: AggFunc, v: Value) -> Result<(), SqlError> {
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

    pub(super) fn finish(self, func: AggFunc, ty: SqlType) -> Result<Value, SqlError> {
        Ok(match func {
            AggFunc::CountStar | AggFunc::Count => Value::Int(self.count),
            _ if self.count == 0 => Value::Null,
            AggFunc::Sum if ty == SqlType::Int8 => {
                Value::Int(i64::try_from(self.int_sum).map_err(|_| SqlError::out_of_range("bigint"))?)
            }
            AggFunc::Sum => Value::Float(self.float_sum),
            AggFunc::Avg => Value::Float(self.float_sum / self.count as f64),
            AggFunc::Min | AggFunc::Max => self.extreme.unwrap_or(Value::Null),
        })
    }
}
