//! Execution of a kernel: work-groups, work-items, statements and expressions.

use crate::sync::{Rendezvous, RendezvousFailure};
use crate::{InterpError, InterpLaunch, WorkItemId, LOCAL_MEMORY_POISON};
use kdsl_ir::scalar;
use kdsl_ir::Expression;
use kdsl_ir::ScalarValue;
use kdsl_ir::{
    AddressSpace, Argument, ArrayType, ExpressionKind, Function, FunctionKind, Literal, LogicalOp,
    Module, ParameterType, Place, PlaceBase, ScalarType, Span, Statement, StatementKind,
    VariableType, WorkItemQuery,
};
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

mod collectives;
mod copies;

use copies::PendingCopies;

/// A kernel argument as the executor takes it: scalar bits, a buffer's elements as bits, or
/// the element count of a launch-sized local array.
pub(crate) enum KernelParameter {
    Scalar(u64),
    Buffer(Vec<u64>),
    Local { element: ScalarType, length: u64 },
}

/// The most elements one private array may have (each work-item allocates its own).
const MAX_PRIVATE_ARRAY_ELEMENTS: u64 = 1 << 24;
/// The most elements one local array may have.
const MAX_LOCAL_ARRAY_ELEMENTS: u64 = 1 << 26;
/// Stack for each thread that runs work-items: deep expressions recurse.
const WORK_ITEM_STACK_BYTES: usize = 4 << 20;

/// Memory shared between work-items: buffers and local arrays, one atomic cell per element.
struct SharedMemory {
    cells: Vec<AtomicU64>,
}

impl SharedMemory {
    fn from_bits(bits: Vec<u64>) -> SharedMemory {
        SharedMemory {
            cells: bits.into_iter().map(AtomicU64::new).collect(),
        }
    }

    fn into_bits(self) -> Vec<u64> {
        self.cells.into_iter().map(AtomicU64::into_inner).collect()
    }
}

/// Runs every work-group of the launch; returns each buffer parameter's final content. What
/// `print` wrote is appended to `output`, also when the launch fails, ordered by linear global
/// work-item id and within a work-item in program order. `synchronizes`: whether the kernel's
/// work-items wait for or exchange values with each other
/// ([`kdsl_ir::analysis::ModuleFeatures::synchronizes`]), so they must run at the same time.
pub(crate) fn run(
    module: &Module,
    kernel: &Function,
    synchronizes: bool,
    launch: &InterpLaunch,
    parameters: Vec<KernelParameter>,
    output: &mut String,
) -> Result<Vec<Option<Vec<u64>>>, InterpError> {
    let mut scalars = Vec::with_capacity(parameters.len());
    let mut buffers = Vec::with_capacity(parameters.len());
    let mut local_parameters = Vec::with_capacity(parameters.len());
    for (parameter, declaration) in parameters.into_iter().zip(&kernel.parameters) {
        let mut local = None;
        match parameter {
            KernelParameter::Scalar(bits) => {
                scalars.push(bits);
                buffers.push(None);
            }
            KernelParameter::Buffer(bits) => {
                scalars.push(0);
                buffers.push(Some(SharedMemory::from_bits(bits)));
            }
            KernelParameter::Local { element, length } => {
                if length > MAX_LOCAL_ARRAY_ELEMENTS {
                    return Err(InterpError::Resources(format!(
                        "local array `{}` has {length} elements, above the interpreter's limit of {MAX_LOCAL_ARRAY_ELEMENTS}",
                        declaration.name
                    )));
                }
                scalars.push(0);
                buffers.push(None);
                local = Some((element, length as usize));
            }
        }
        local_parameters.push(local);
    }
    for variable in &kernel.variables {
        if let VariableType::Array { ty } = &variable.ty {
            let limit = match variable.space {
                AddressSpace::Local => MAX_LOCAL_ARRAY_ELEMENTS,
                _ => MAX_PRIVATE_ARRAY_ELEMENTS,
            };
            if ty.element_count() > limit {
                return Err(InterpError::Resources(format!(
                    "array `{}` has {} elements, above the interpreter's limit of {limit}",
                    variable.name,
                    ty.element_count()
                )));
            }
        }
    }
    let launch_state = Launch {
        module,
        kernel,
        launch,
        scalars: &scalars,
        buffers: &buffers,
        local_parameters: &local_parameters,
        printed: Mutex::new(Vec::new()),
    };
    let counts = launch.group_counts();
    let outcome = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("kdsl-interp".into())
            .stack_size(WORK_ITEM_STACK_BYTES)
            .spawn_scoped(scope, || {
                for z in 0..counts[2] {
                    for y in 0..counts[1] {
                        for x in 0..counts[0] {
                            launch_state.run_group([x, y, z], synchronizes)?;
                        }
                    }
                }
                Ok(())
            })
            .map_err(|error| InterpError::Resources(error.to_string()))?
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    });
    let mut printed = launch_state
        .printed
        .into_inner()
        .unwrap_or_else(|poison| poison.into_inner());
    // Stable: a work-item's lines keep their order.
    printed.sort_by_key(|(work_item, _)| *work_item);
    for (_, line) in printed {
        output.push_str(&line);
    }
    outcome?;
    Ok(buffers
        .into_iter()
        .map(|buffer| buffer.map(SharedMemory::into_bits))
        .collect())
}

/// What every work-group of one launch shares.
struct Launch<'a> {
    module: &'a Module,
    kernel: &'a Function,
    launch: &'a InterpLaunch,
    /// Scalar kernel arguments by parameter index (0 for buffers).
    scalars: &'a [u64],
    /// Buffer kernel arguments by parameter index (`None` for scalars).
    buffers: &'a [Option<SharedMemory>],
    /// The element type and length of each launch-sized local array, by parameter index.
    local_parameters: &'a [Option<(ScalarType, usize)>],
    /// What `print` wrote, with the linear global id of the work-item that wrote it.
    printed: Mutex<Vec<(u64, String)>>,
}

/// One work-group while it runs.
struct Group<'a> {
    launch: &'a Launch<'a>,
    group_id: [u32; 3],
    /// Local arrays by kernel variable index.
    locals: Vec<Option<SharedMemory>>,
    /// Launch-sized local arrays by kernel parameter index.
    local_parameters: Vec<Option<SharedMemory>>,
    /// Present when the work-items run as threads.
    barrier: Option<Rendezvous>,
    sub_groups: Vec<Rendezvous>,
    aborted: AtomicBool,
    first_error: Mutex<Option<InterpError>>,
}

impl<'a> Launch<'a> {
    fn run_group(&self, group_id: [u32; 3], synchronizes: bool) -> Result<(), InterpError> {
        let locals = self
            .kernel
            .variables
            .iter()
            .map(|variable| match (&variable.ty, variable.space) {
                (VariableType::Array { ty }, AddressSpace::Local) => {
                    let poison = scalar::truncate(LOCAL_MEMORY_POISON, ty.element);
                    Some(SharedMemory::from_bits(vec![
                        poison;
                        ty.element_count() as usize
                    ]))
                }
                _ => None,
            })
            .collect();
        let local_parameters = self
            .local_parameters
            .iter()
            .map(|local| {
                local.map(|(element, length)| {
                    let poison = scalar::truncate(LOCAL_MEMORY_POISON, element);
                    SharedMemory::from_bits(vec![poison; length])
                })
            })
            .collect();
        let group_size = self.launch.work_group_size() as usize;
        let lanes = self.launch.sub_group_size as usize;
        let sub_group_count = group_size.div_ceil(lanes);
        let (barrier, sub_groups) = if synchronizes {
            let sub_groups = (0..sub_group_count)
                .map(|index| Rendezvous::new(lanes.min(group_size - index * lanes)))
                .collect();
            (Some(Rendezvous::new(group_size)), sub_groups)
        } else {
            (None, Vec::new())
        };
        let group = Group {
            launch: self,
            group_id,
            locals,
            local_parameters,
            barrier,
            sub_groups,
            aborted: AtomicBool::new(false),
            first_error: Mutex::new(None),
        };
        let local = self.launch.local;
        let work_items = (0..local[2]).flat_map(move |z| {
            (0..local[1]).flat_map(move |y| (0..local[0]).map(move |x| [x, y, z]))
        });
        if synchronizes {
            std::thread::scope(|scope| {
                for local_id in work_items {
                    let group = &group;
                    let spawned = std::thread::Builder::new()
                        .stack_size(WORK_ITEM_STACK_BYTES)
                        .spawn_scoped(scope, move || group.run_work_item(local_id));
                    if let Err(error) = spawned {
                        group.fail(InterpError::Resources(error.to_string()));
                        break;
                    }
                }
            });
        } else {
            for local_id in work_items {
                group.run_work_item(local_id);
                if group.aborted.load(Ordering::Acquire) {
                    break;
                }
            }
        }
        match group
            .first_error
            .into_inner()
            .unwrap_or_else(|poison| poison.into_inner())
        {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }
}

/// Why a work-item stopped early.
enum Fault {
    Error(Box<InterpError>),
    /// Another work-item of the group failed.
    Aborted,
}

type Execution<T> = Result<T, Fault>;

/// How a statement ended.
enum Flow {
    Normal,
    Break,
    Continue,
    Return(Option<u64>),
}

impl<'a> Group<'a> {
    /// Records the group's first error and wakes every waiting work-item.
    fn fail(&self, error: InterpError) {
        {
            let mut first = self
                .first_error
                .lock()
                .unwrap_or_else(|poison| poison.into_inner());
            if first.is_none() {
                *first = Some(error);
            }
        }
        self.aborted.store(true, Ordering::Release);
        if let Some(barrier) = &self.barrier {
            barrier.wake_all();
        }
        for sub_group in &self.sub_groups {
            sub_group.wake_all();
        }
    }

    fn run_work_item(&self, local_id: [u32; 3]) {
        let launch = self.launch.launch;
        let global_id = [0, 1, 2].map(|d| self.group_id[d] * launch.local[d] + local_id[d]);
        let linear_local = (local_id[0]
            + launch.local[0] * (local_id[1] + launch.local[1] * local_id[2]))
            as usize;
        let lanes = launch.sub_group_size as usize;
        let group_size = launch.work_group_size() as usize;
        let sub_group = linear_local / lanes;
        let item = WorkItem {
            group: self,
            id: WorkItemId {
                global: global_id,
                local: local_id,
                group: self.group_id,
            },
            linear_local,
            sub_group,
            lane: linear_local % lanes,
            sub_group_size: lanes.min(group_size - sub_group * lanes) as u32,
            copies: RefCell::default(),
        };
        let kernel = self.launch.kernel;
        let outcome = item
            .call(kernel, kernel_bindings(kernel, self.launch.scalars))
            .and_then(|_| item.finish());
        match outcome {
            Ok(()) | Err(Fault::Aborted) => {}
            Err(Fault::Error(error)) => self.fail(*error),
        }
    }
}

fn kernel_bindings(kernel: &Function, scalars: &[u64]) -> Vec<Binding> {
    kernel
        .parameters
        .iter()
        .enumerate()
        .map(|(index, parameter)| match parameter.ty {
            ParameterType::Scalar { .. } => Binding::Scalar(scalars[index]),
            ParameterType::Buffer {
                space: AddressSpace::Local,
                ..
            } => Binding::LocalBuffer(index),
            ParameterType::Buffer { .. } => Binding::Buffer(index),
            // The validator refuses array parameters on kernels.
            ParameterType::Array { .. } => Binding::PrivateArray(Vec::new()),
        })
        .collect()
}

/// A parameter inside a running function.
#[derive(Clone)]
enum Binding {
    Scalar(u64),
    /// The kernel parameter index of the buffer.
    Buffer(usize),
    /// A launch-sized local array: the kernel parameter index it was passed for.
    LocalBuffer(usize),
    /// A local array passed by reference: its kernel variable index.
    LocalArray(usize),
    /// A private array passed by reference. The callee holds the caller's elements while it
    /// runs and gives them back on return; no one else can see them meanwhile (a call never
    /// gets one array twice where it may write it), so this is the same as a reference.
    PrivateArray(Vec<u64>),
}

/// A variable inside a running function.
enum Slot {
    Scalar(u64),
    Private(Vec<u64>),
    /// A local array: its kernel variable index.
    Local(usize),
}

struct Frame<'m> {
    function: &'m Function,
    parameters: Vec<Binding>,
    variables: Vec<Slot>,
}

/// Where a place is: shared memory, or an element of a private array of the current frame.
enum Location<'g> {
    Shared(&'g AtomicU64),
    Private { array: PrivateArray, index: usize },
}

/// A private array of the current frame: an array variable or an array parameter.
#[derive(Clone, Copy)]
enum PrivateArray {
    Variable(usize),
    Parameter(usize),
}

impl Frame<'_> {
    fn private_elements(&mut self, array: PrivateArray) -> Option<&mut Vec<u64>> {
        match array {
            PrivateArray::Variable(index) => match self.variables.get_mut(index)? {
                Slot::Private(elements) => Some(elements),
                _ => None,
            },
            PrivateArray::Parameter(index) => match self.parameters.get_mut(index)? {
                Binding::PrivateArray(elements) => Some(elements),
                _ => None,
            },
        }
    }
}

struct WorkItem<'g> {
    group: &'g Group<'g>,
    id: WorkItemId,
    linear_local: usize,
    sub_group: usize,
    lane: usize,
    sub_group_size: u32,
    /// Its asynchronous copies that have not landed (`async_copy`).
    copies: RefCell<PendingCopies<'g>>,
}

impl<'g> WorkItem<'g> {
    /// Records a line `print` wrote, under this work-item's linear global id.
    fn print(&self, line: String) {
        let global = self.group.launch.launch.global.map(u64::from);
        let [x, y, z] = self.id.global.map(u64::from);
        let linear = x + global[0] * (y + global[1] * z);
        self.group
            .launch
            .printed
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .push((linear, line));
    }

    fn error(&self, error: impl FnOnce(WorkItemId) -> InterpError) -> Fault {
        Fault::Error(Box::new(error(self.id)))
    }

    fn undefined(&self, span: Span, message: String) -> Fault {
        self.error(|work_item| InterpError::UndefinedBehaviour {
            span,
            work_item,
            message,
        })
    }

    fn rendezvous_failure(&self, failure: RendezvousFailure) -> Fault {
        match failure {
            RendezvousFailure::Aborted => Fault::Aborted,
            RendezvousFailure::Divergent { span, message } => {
                self.error(|work_item| InterpError::DivergentSynchronization {
                    span,
                    work_item,
                    message,
                })
            }
        }
    }

    /// Tells the group's meeting points that this work-item will not arrive again.
    fn finish(&self) -> Execution<()> {
        // Copies never waited for land at some time; here, at the latest.
        let copies = std::mem::take(&mut *self.copies.borrow_mut());
        for group in copies.committed {
            PendingCopies::land(group);
        }
        PendingCopies::land(copies.open);
        if let Some(barrier) = &self.group.barrier {
            barrier
                .finish("barrier")
                .map_err(|failure| self.rendezvous_failure(failure))?;
        }
        if let Some(sub_group) = self.group.sub_groups.get(self.sub_group) {
            sub_group
                .finish("sub-group operation")
                .map_err(|failure| self.rendezvous_failure(failure))?;
        }
        Ok(())
    }

    /// Runs `function` with its parameters bound; returns its result, if it has one, and the
    /// parameters (private arrays passed by reference go back to the caller).
    fn call(
        &self,
        function: &'g Function,
        parameters: Vec<Binding>,
    ) -> Execution<(Option<u64>, Vec<Binding>)> {
        let variables = function
            .variables
            .iter()
            .enumerate()
            .map(|(index, variable)| match (&variable.ty, variable.space) {
                (VariableType::Scalar { .. }, _) => Slot::Scalar(0),
                (VariableType::Array { .. }, AddressSpace::Local)
                    if function.kind == FunctionKind::Kernel =>
                {
                    Slot::Local(index)
                }
                (VariableType::Array { ty }, _) => {
                    Slot::Private(vec![0; ty.element_count() as usize])
                }
            })
            .collect();
        let mut frame = Frame {
            function,
            parameters,
            variables,
        };
        let result = match self.block(&mut frame, &function.body)? {
            Flow::Return(value) => value,
            _ => None,
        };
        Ok((result, frame.parameters))
    }

    fn block(&self, frame: &mut Frame<'g>, block: &'g [Statement]) -> Execution<Flow> {
        for statement in block {
            match self.statement(frame, statement)? {
                Flow::Normal => {}
                other => return Ok(other),
            }
        }
        Ok(Flow::Normal)
    }

    fn statement(&self, frame: &mut Frame<'g>, statement: &'g Statement) -> Execution<Flow> {
        match &statement.kind {
            StatementKind::Assign { variable, value } => {
                let value = self.expression(frame, value)?;
                frame.variables[variable.0 as usize] = Slot::Scalar(value);
            }
            StatementKind::Store { place, value } => {
                let location = self.locate(frame, place, statement.span)?;
                let value = self.expression(frame, value)?;
                match location {
                    Location::Shared(cell) => cell.store(value, Ordering::Relaxed),
                    Location::Private { array, index } => {
                        if let Some(elements) = frame.private_elements(array) {
                            elements[index] = value;
                        }
                    }
                }
            }
            StatementKind::VectorStore { place, values } => {
                let values = self.expressions(frame, values)?;
                let cells = self.locate_vector(frame, place, values.len(), statement.span)?;
                for (cell, value) in cells.iter().zip(values) {
                    cell.store(value, Ordering::Relaxed);
                }
            }
            StatementKind::If {
                condition,
                accept,
                reject,
            } => {
                let taken = if self.expression(frame, condition)? != 0 {
                    accept
                } else {
                    reject
                };
                return self.block(frame, taken);
            }
            StatementKind::Loop {
                body, continuing, ..
            } => loop {
                match self.block(frame, body)? {
                    Flow::Break => break,
                    Flow::Return(value) => return Ok(Flow::Return(value)),
                    Flow::Normal | Flow::Continue => {}
                }
                match self.block(frame, continuing)? {
                    Flow::Break => break,
                    Flow::Return(value) => return Ok(Flow::Return(value)),
                    Flow::Normal | Flow::Continue => {}
                }
            },
            StatementKind::Break => return Ok(Flow::Break),
            StatementKind::Continue => return Ok(Flow::Continue),
            StatementKind::Return { value } => {
                let value = match value {
                    Some(value) => Some(self.expression(frame, value)?),
                    None => None,
                };
                return Ok(Flow::Return(value));
            }
            // The cells are relaxed atomics: a fence of the host orders them as the kernel's does.
            StatementKind::DeviceFence => std::sync::atomic::fence(Ordering::SeqCst),
            StatementKind::Barrier { .. } => self.group_barrier(statement.span, "barrier")?,
            StatementKind::Matrix(op) => {
                return Err(Fault::Error(Box::new(InterpError::InvalidModule(format!(
                    "`{}` was not expanded into plain IR",
                    op.name()
                )))))
            }
            StatementKind::AsyncCopy(op) => self.async_copy(frame, op, statement.span)?,
            StatementKind::TileCopy(op) => self.tile_copy(frame, op, statement.span)?,
            StatementKind::Evaluate { value } => {
                self.expression(frame, value)?;
            }
            StatementKind::Print { text, arguments } => {
                let mut line = String::new();
                for (index, piece) in text.iter().enumerate() {
                    line.push_str(piece);
                    if let Some(argument) = arguments.get(index) {
                        let bits = self.expression(frame, argument)?;
                        let value = ScalarValue::from_bits(bits, argument.ty);
                        line.push_str(&kdsl_ir::print_format::display(value));
                    }
                }
                self.print(line);
            }
        }
        Ok(Flow::Normal)
    }

    /// Every work-item of the group reaches this point (`operation`) before any goes on.
    fn group_barrier(&self, span: Span, operation: &'static str) -> Execution<()> {
        if let Some(barrier) = &self.group.barrier {
            barrier
                .arrive(self.linear_local, 0, span, operation, &self.group.aborted)
                .map_err(|failure| self.rendezvous_failure(failure))?;
        }
        Ok(())
    }

    /// Evaluates the indices of `place` and checks them against its extents.
    fn locate(
        &self,
        frame: &mut Frame<'g>,
        place: &'g Place,
        span: Span,
    ) -> Execution<Location<'g>> {
        let mut indices = Vec::with_capacity(place.indices.len());
        for index in &place.indices {
            let bits = self.expression(frame, index)?;
            indices.push(scalar::integer_as_i128(bits, index.ty));
        }
        self.locate_at(frame, place, &indices, span)
    }

    /// `place` at the evaluated `indices`, checked against its extents.
    fn locate_at(
        &self,
        frame: &Frame<'g>,
        place: &'g Place,
        indices: &[i128],
        span: Span,
    ) -> Execution<Location<'g>> {
        let out_of_bounds = |message: String| {
            self.error(|work_item| InterpError::OutOfBounds {
                span,
                work_item,
                message,
            })
        };
        match place.base {
            PlaceBase::Parameter(parameter) => {
                let declaration = frame.function.parameter(parameter);
                let name = &declaration.name;
                match &frame.parameters[parameter.0 as usize] {
                    binding @ (Binding::Buffer(_) | Binding::LocalBuffer(_)) => {
                        let Some(memory) = self.buffer_memory(binding) else {
                            return Err(self.undefined(span, format!("`{name}` is not a buffer")));
                        };
                        let what = match binding {
                            Binding::LocalBuffer(_) => "local array",
                            _ => "buffer",
                        };
                        let index = indices.first().copied().unwrap_or(0);
                        // A buffer of records holds one cell per field.
                        let (fields, field) = match (&declaration.ty, place.field) {
                            (
                                ParameterType::Buffer {
                                    record: Some(record),
                                    ..
                                },
                                Some(field),
                            ) => (record.fields.len(), field as usize),
                            _ => (1, 0),
                        };
                        let length = memory.cells.len() / fields;
                        if index < 0 || index >= length as i128 {
                            return Err(out_of_bounds(format!(
                                "index {index} into {what} `{name}` of {length} elements"
                            )));
                        }
                        Ok(Location::Shared(
                            &memory.cells[index as usize * fields + field],
                        ))
                    }
                    binding @ (Binding::LocalArray(_) | Binding::PrivateArray(_)) => {
                        let ParameterType::Array { ty, .. } = &declaration.ty else {
                            return Err(self.undefined(span, format!("`{name}` is not an array")));
                        };
                        let linear = linear_index(indices, ty, name).map_err(out_of_bounds)?;
                        match binding {
                            Binding::LocalArray(local) => {
                                self.local_cell(*local, linear, name, span)
                            }
                            _ => Ok(Location::Private {
                                array: PrivateArray::Parameter(parameter.0 as usize),
                                index: linear,
                            }),
                        }
                    }
                    Binding::Scalar(_) => {
                        Err(self.undefined(span, format!("`{name}` is not a buffer")))
                    }
                }
            }
            PlaceBase::Variable(variable) => {
                let declaration = frame.function.variable(variable);
                let VariableType::Array { ty } = &declaration.ty else {
                    return Err(
                        self.undefined(span, format!("`{}` is not an array", declaration.name))
                    );
                };
                let linear = linear_index(indices, ty, &declaration.name).map_err(out_of_bounds)?;
                match &frame.variables[variable.0 as usize] {
                    Slot::Local(local) => self.local_cell(*local, linear, &declaration.name, span),
                    _ => Ok(Location::Private {
                        array: PrivateArray::Variable(variable.0 as usize),
                        index: linear,
                    }),
                }
            }
        }
    }

    /// The cells of the buffer vector at `place`, whose index counts vectors of `width`.
    fn locate_vector(
        &self,
        frame: &mut Frame<'g>,
        place: &'g Place,
        width: usize,
        span: Span,
    ) -> Execution<&'g [AtomicU64]> {
        let Some(index) = place.indices.first() else {
            return Err(self.undefined(span, "a vector access without an index".to_string()));
        };
        let bits = self.expression(frame, index)?;
        let index = scalar::integer_as_i128(bits, index.ty);
        let PlaceBase::Parameter(parameter) = place.base else {
            return Err(self.undefined(span, "a vector access of an array".to_string()));
        };
        let name = &frame.function.parameter(parameter).name;
        let memory = self.buffer_memory(&frame.parameters[parameter.0 as usize]);
        let Some(memory) = memory else {
            return Err(self.undefined(span, format!("`{name}` is not a buffer")));
        };
        let vectors = (memory.cells.len() / width) as i128;
        if index < 0 || index >= vectors {
            return Err(self.error(|work_item| InterpError::OutOfBounds {
                span,
                work_item,
                message: format!(
                    "vector index {index} into buffer `{name}` of {} elements ({vectors} vectors of {width})",
                    memory.cells.len()
                ),
            }));
        }
        let first = index as usize * width;
        Ok(&memory.cells[first..first + width])
    }

    /// Element `linear` of the kernel's local array `local`.
    /// The memory of a buffer or launch-sized local array binding.
    fn buffer_memory(&self, binding: &Binding) -> Option<&'g SharedMemory> {
        match *binding {
            Binding::Buffer(buffer) => self.group.launch.buffers[buffer].as_ref(),
            Binding::LocalBuffer(parameter) => self.group.local_parameters[parameter].as_ref(),
            _ => None,
        }
    }

    fn local_cell(
        &self,
        local: usize,
        linear: usize,
        name: &str,
        span: Span,
    ) -> Execution<Location<'g>> {
        match &self.group.locals.get(local) {
            Some(Some(memory)) => Ok(Location::Shared(&memory.cells[linear])),
            _ => Err(self.undefined(span, format!("local array `{name}` has no memory"))),
        }
    }

    fn read(&self, frame: &Frame<'g>, location: &Location<'g>) -> u64 {
        match location {
            Location::Shared(cell) => cell.load(Ordering::Relaxed),
            Location::Private { array, index } => {
                let elements = match *array {
                    PrivateArray::Variable(variable) => match &frame.variables[variable] {
                        Slot::Private(elements) => elements,
                        _ => return 0,
                    },
                    PrivateArray::Parameter(parameter) => match &frame.parameters[parameter] {
                        Binding::PrivateArray(elements) => elements,
                        _ => return 0,
                    },
                };
                elements[*index]
            }
        }
    }

    /// The values of `arguments`, in order.
    fn expressions(
        &self,
        frame: &mut Frame<'g>,
        arguments: &'g [Expression],
    ) -> Execution<Vec<u64>> {
        arguments
            .iter()
            .map(|argument| self.expression(frame, argument))
            .collect()
    }

    fn expression(&self, frame: &mut Frame<'g>, expression: &'g Expression) -> Execution<u64> {
        let ty = expression.ty;
        let span = expression.span;
        Ok(match &expression.kind {
            ExpressionKind::Literal(Literal::Bool(value)) => u64::from(*value),
            ExpressionKind::Literal(Literal::Integer(bits)) => *bits,
            ExpressionKind::Literal(Literal::Float(value)) => scalar::f64_to_float(*value, ty),
            ExpressionKind::Parameter(parameter) => match &frame.parameters[parameter.0 as usize] {
                Binding::Scalar(bits) => *bits,
                _ => 0,
            },
            ExpressionKind::Variable(variable) => match &frame.variables[variable.0 as usize] {
                Slot::Scalar(bits) => *bits,
                _ => 0,
            },
            ExpressionKind::Load(place) => {
                let location = self.locate(frame, place, span)?;
                self.read(frame, &location)
            }
            ExpressionKind::VectorLoad {
                place,
                width,
                component,
            } => {
                let cells = self.locate_vector(frame, place, usize::from(*width), span)?;
                cells[usize::from(*component)].load(Ordering::Relaxed)
            }
            ExpressionKind::Unary { op, operand } => {
                let operand_type = operand.ty;
                let value = self.expression(frame, operand)?;
                if *op == kdsl_ir::UnaryOp::Negate
                    && scalar::negation_overflows(operand_type, value)
                {
                    let overflow = scalar::Undefined::Overflow {
                        ty: operand_type,
                        op: kdsl_ir::BinaryOp::Subtract,
                    };
                    return Err(self.undefined(span, overflow.to_string()));
                }
                scalar::unary(*op, operand_type, value)
            }
            ExpressionKind::Binary { op, left, right } => {
                let x = self.expression(frame, left)?;
                let y = self.expression(frame, right)?;
                scalar::binary(*op, left.ty, x, y, right.ty)
                    .map_err(|undefined| self.undefined(span, undefined.to_string()))?
            }
            ExpressionKind::ShortCircuit { op, left, right } => {
                let x = self.expression(frame, left)?;
                match (op, x != 0) {
                    (LogicalOp::And, false) => 0,
                    (LogicalOp::Or, true) => 1,
                    _ => u64::from(self.expression(frame, right)? != 0),
                }
            }
            ExpressionKind::Conditional {
                condition,
                accept,
                reject,
            } => {
                if self.expression(frame, condition)? != 0 {
                    self.expression(frame, accept)?
                } else {
                    self.expression(frame, reject)?
                }
            }
            ExpressionKind::Cast { value } => {
                let from = value.ty;
                let bits = self.expression(frame, value)?;
                scalar::cast(bits, from, ty)
            }
            ExpressionKind::DimensionIndex {
                index,
                buffer,
                dimension,
                extent,
            } => {
                let bits = self.expression(frame, index)?;
                let value = scalar::integer_as_i128(bits, index.ty);
                let extent_value = match &frame.parameters[extent.0 as usize] {
                    Binding::Scalar(bits) => i128::from(*bits as u32),
                    _ => 0,
                };
                if !(0..extent_value).contains(&value) {
                    let name = &frame.function.parameter(*buffer).name;
                    return Err(self.error(|work_item| InterpError::OutOfBounds {
                        span,
                        work_item,
                        message: format!(
                            "index {value} in dimension {dimension} of buffer `{name}` of extent {extent_value}"
                        ),
                    }));
                }
                value as u64
            }
            ExpressionKind::Select {
                condition,
                accept,
                reject,
            } => {
                let condition = self.expression(frame, condition)?;
                let accept = self.expression(frame, accept)?;
                let reject = self.expression(frame, reject)?;
                if condition != 0 {
                    accept
                } else {
                    reject
                }
            }
            ExpressionKind::Call {
                function,
                arguments,
            } => {
                let callee = self.group.launch.module.function(*function);
                self.call_device_function(frame, callee, arguments)?
            }
            ExpressionKind::WorkItem { query, dimension } => {
                let d = usize::from(*dimension).min(2);
                let launch = self.group.launch.launch;
                match query {
                    WorkItemQuery::GlobalId => u64::from(self.id.global[d]),
                    WorkItemQuery::LocalId => u64::from(self.id.local[d]),
                    WorkItemQuery::GroupId => u64::from(self.id.group[d]),
                    WorkItemQuery::LocalSize => u64::from(launch.local[d]),
                    WorkItemQuery::GlobalSize => u64::from(launch.global[d]),
                    WorkItemQuery::NumGroups => u64::from(launch.global[d] / launch.local[d]),
                }
            }
            ExpressionKind::Math {
                function,
                arguments,
            } => {
                let mut values = [0u64; 3];
                for (slot, argument) in values.iter_mut().zip(arguments) {
                    *slot = self.expression(frame, argument)?;
                }
                let operand = kdsl_ir::MathFunction::operand_type(arguments, ty);
                scalar::math(*function, operand, &values[..arguments.len().max(1)])
            }
            ExpressionKind::Atomic {
                op,
                place,
                value,
                comparand,
            } => {
                let location = self.locate(frame, place, span)?;
                let operand = self.expression(frame, value)?;
                let expected = match comparand {
                    Some(comparand) => self.expression(frame, comparand)?,
                    None => 0,
                };
                let element = place.element;
                let update = |old| scalar::atomic_update(*op, element, old, operand, expected);
                match location {
                    Location::Shared(cell) => {
                        match cell.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |old| {
                            Some(update(old))
                        }) {
                            Ok(old) | Err(old) => old,
                        }
                    }
                    Location::Private { array, index } => match frame.private_elements(array) {
                        Some(elements) => {
                            let old = elements[index];
                            elements[index] = update(old);
                            old
                        }
                        None => 0,
                    },
                }
            }
            ExpressionKind::SubGroup { op, arguments } => {
                self.sub_group_operation(frame, *op, arguments, ty, span)?
            }
            ExpressionKind::WorkGroup { op, arguments } => {
                self.work_group_operation(frame, *op, arguments, ty, span)?
            }
        })
    }

    /// Calls a device function: values first, in order, then the arrays. The callee holds a
    /// writable private array's elements until it returns; a read-only one gets a copy.
    fn call_device_function(
        &self,
        frame: &mut Frame<'g>,
        callee: &'g Function,
        arguments: &'g [Argument],
    ) -> Execution<u64> {
        let mut bindings = Vec::with_capacity(arguments.len());
        for argument in arguments {
            bindings.push(match argument {
                Argument::Value(value) => Binding::Scalar(self.expression(frame, value)?),
                Argument::Buffer(parameter) => frame.parameters[parameter.0 as usize].clone(),
                Argument::Array(_) => Binding::Scalar(0),
            });
        }
        let mut lent = Vec::new();
        for ((binding, argument), parameter) in
            bindings.iter_mut().zip(arguments).zip(&callee.parameters)
        {
            let Argument::Array(base) = argument else {
                continue;
            };
            let writable = matches!(parameter.ty, ParameterType::Array { writable: true, .. });
            let array = match *base {
                PlaceBase::Variable(id) => match &frame.variables[id.0 as usize] {
                    Slot::Local(local) => {
                        *binding = Binding::LocalArray(*local);
                        continue;
                    }
                    _ => PrivateArray::Variable(id.0 as usize),
                },
                PlaceBase::Parameter(id) => match &frame.parameters[id.0 as usize] {
                    Binding::LocalArray(local) => {
                        *binding = Binding::LocalArray(*local);
                        continue;
                    }
                    _ => PrivateArray::Parameter(id.0 as usize),
                },
            };
            // A read-only array may be passed more than once: each gets a copy.
            let elements = match frame.private_elements(array) {
                Some(elements) if writable => std::mem::take(elements),
                Some(elements) => elements.clone(),
                None => Vec::new(),
            };
            *binding = Binding::PrivateArray(elements);
            if writable {
                lent.push(array);
            }
        }
        let (result, returned) = self.call(callee, bindings)?;
        let mut returned_arrays =
            returned
                .into_iter()
                .zip(&callee.parameters)
                .filter_map(|(binding, parameter)| match (binding, &parameter.ty) {
                    (
                        Binding::PrivateArray(elements),
                        ParameterType::Array { writable: true, .. },
                    ) => Some(elements),
                    _ => None,
                });
        for array in lent {
            if let (Some(slot), Some(elements)) =
                (frame.private_elements(array), returned_arrays.next())
            {
                *slot = elements;
            }
        }
        Ok(result.unwrap_or(0))
    }
}

/// The row-major position of `indices` in an array of type `ty`, or a message for the first
/// index outside its dimension.
fn linear_index(indices: &[i128], ty: &ArrayType, name: &str) -> Result<usize, String> {
    let mut linear: usize = 0;
    for (dimension, (&index, &extent)) in indices.iter().zip(&ty.dimensions).enumerate() {
        if index < 0 || index >= i128::from(extent) {
            return Err(format!(
                "index {index} in dimension {dimension} of array `{name}` ({ty})"
            ));
        }
        linear = linear * extent as usize + index as usize;
    }
    Ok(linear)
}
