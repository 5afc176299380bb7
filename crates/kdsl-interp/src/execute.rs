//! Execution of a kernel: work-groups, work-items, statements and expressions.

use crate::sync::{Rendezvous, RendezvousFailure};
use crate::{InterpError, InterpLaunch, WorkItemId, LOCAL_MEMORY_POISON};
use kdsl_ir::scalar;
use kdsl_ir::Expression;
use kdsl_ir::ScalarValue;
use kdsl_ir::{
    AddressSpace, Argument, ArrayType, ExpressionKind, Function, FunctionKind, Literal, LogicalOp,
    Module, ParameterType, Place, PlaceBase, Reduction, ScalarType, Span, Statement, StatementKind,
    SubGroupOp, VariableType, WorkGroupOp, WorkItemQuery,
};
use kdsl_ir::{AsyncCopyOp, TileCopyOp};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

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

/// A work-item's asynchronous copies in flight: each is the destination cells and the values
/// read from the source when it started; they land at the `async_wait` that completes their
/// group (or when the work-item ends).
#[derive(Default)]
struct PendingCopies<'g> {
    /// Started since the last `async_commit`.
    open: Vec<(&'g AtomicU64, u64)>,
    /// Committed groups, oldest first.
    committed: VecDeque<Vec<(&'g AtomicU64, u64)>>,
    /// Tile copies started on each slot since its last wait (work-item 0 holds them).
    tiles: [Vec<(&'g AtomicU64, u64)>; kdsl_ir::tile_copy::SLOTS as usize],
    /// The local cells tile stores read since the last store wait, with the values they read
    /// (work-item 0 holds them): writing one before the wait is undefined behaviour.
    stored: Vec<(&'g AtomicU64, u64)>,
}

/// A tile statement's box: its local memory from element `start` of `local`, and rows of the
/// 2-D buffer parameter `buffer` from `corner`.
struct TileBox<'g> {
    local: &'g Place,
    start: i128,
    buffer: kdsl_ir::ParameterId,
    element: ScalarType,
    corner: [u64; 2],
    rows: u32,
}

impl PendingCopies<'_> {
    fn land(copies: Vec<(&AtomicU64, u64)>) {
        for (cell, value) in copies {
            cell.store(value, Ordering::Relaxed);
        }
    }
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

    /// An asynchronous copy reads its source when it starts and writes its destination when
    /// the `async_wait` that completes its group runs, so a kernel that reads the destination
    /// before waiting sees the old contents (poison, for local memory never written).
    fn async_copy(&self, frame: &mut Frame<'g>, op: &'g AsyncCopyOp, span: Span) -> Execution<()> {
        match op {
            AsyncCopyOp::Copy {
                destination,
                source,
                count,
            } => {
                let mut starts = [0i128; 2];
                for (start, place) in starts.iter_mut().zip([destination, source]) {
                    let Some(index) = place.indices.first() else {
                        return Err(self.undefined(span, "a copy without an index".to_string()));
                    };
                    let bits = self.expression(frame, index)?;
                    *start = scalar::integer_as_i128(bits, index.ty);
                }
                let count = i128::from(*count);
                if let Some(start) = starts.iter().find(|start| *start % count != 0) {
                    return Err(self.undefined(
                        span,
                        format!(
                            "`async_copy` of {count} elements at index {start}, not a multiple of {count}"
                        ),
                    ));
                }
                let mut copies = Vec::with_capacity(count as usize);
                for offset in 0..count {
                    let from = self.locate_at(frame, source, &[starts[1] + offset], span)?;
                    let to = self.locate_at(frame, destination, &[starts[0] + offset], span)?;
                    let (Location::Shared(from), Location::Shared(to)) = (from, to) else {
                        return Err(self.undefined(span, "a copy of private memory".to_string()));
                    };
                    copies.push((to, from.load(Ordering::Relaxed)));
                }
                self.copies.borrow_mut().open.extend(copies);
            }
            AsyncCopyOp::Commit => {
                let mut copies = self.copies.borrow_mut();
                let group = std::mem::take(&mut copies.open);
                copies.committed.push_back(group);
            }
            AsyncCopyOp::Wait { pending } => {
                let mut copies = self.copies.borrow_mut();
                while copies.committed.len() > *pending as usize {
                    if let Some(group) = copies.committed.pop_front() {
                        PendingCopies::land(group);
                    }
                }
            }
        }
        Ok(())
    }

    /// A tile copy is the work-group's: work-item 0 reads the source when the copy starts and
    /// lands it at the wait on its slot, which is also a barrier; every work-item evaluates
    /// the operands. Reading the destination before the wait sees the old contents. A tile
    /// store is a barrier, then work-item 0 writes the box, then a barrier; its wait reports
    /// local memory a store read and the group wrote before the wait.
    fn tile_copy(&self, frame: &mut Frame<'g>, op: &'g TileCopyOp, span: Span) -> Execution<()> {
        match op {
            TileCopyOp::Copy {
                destination,
                source,
                element,
                row,
                column,
                rows,
                slot,
            } => {
                let Some(index) = destination.indices.first() else {
                    return Err(self.undefined(span, "a copy without an index".to_string()));
                };
                let start = scalar::integer_as_i128(self.expression(frame, index)?, index.ty);
                let corner = [
                    self.expression(frame, row)?,
                    self.expression(frame, column)?,
                ];
                let slot = self.tile_slot(frame, slot, span)?;
                if self.linear_local != 0 {
                    return Ok(());
                }
                let tile = TileBox {
                    local: destination,
                    start,
                    buffer: *source,
                    element: *element,
                    corner,
                    rows: *rows,
                };
                let mut copies = Vec::new();
                self.walk_tile_box(frame, &tile, span, |local, cell| {
                    copies.push((local, cell.map_or(0, |cell| cell.load(Ordering::Relaxed))));
                })?;
                self.copies.borrow_mut().tiles[slot].extend(copies);
            }
            TileCopyOp::Store {
                destination,
                element,
                row,
                column,
                rows,
                source,
            } => {
                let corner = [
                    self.expression(frame, row)?,
                    self.expression(frame, column)?,
                ];
                let Some(index) = source.indices.first() else {
                    return Err(self.undefined(span, "a store without an index".to_string()));
                };
                let start = scalar::integer_as_i128(self.expression(frame, index)?, index.ty);
                self.group_barrier(span, op.name())?;
                if self.linear_local == 0 {
                    let tile = TileBox {
                        local: source,
                        start,
                        buffer: *destination,
                        element: *element,
                        corner,
                        rows: *rows,
                    };
                    let mut read = Vec::new();
                    self.walk_tile_box(frame, &tile, span, |local, cell| {
                        let value = local.load(Ordering::Relaxed);
                        read.push((local, value));
                        if let Some(cell) = cell {
                            cell.store(value, Ordering::Relaxed);
                        }
                    })?;
                    self.copies.borrow_mut().stored.extend(read);
                }
                self.group_barrier(span, op.name())?;
            }
            TileCopyOp::StoreWait => {
                // Every work-item's writes before the wait must be in before the tile is
                // compared (work-item 0 alone would see only its own).
                self.group_barrier(span, op.name())?;
                if self.linear_local == 0 {
                    let stored = std::mem::take(&mut self.copies.borrow_mut().stored);
                    if stored
                        .iter()
                        .any(|(cell, value)| cell.load(Ordering::Relaxed) != *value)
                    {
                        return Err(self.undefined(
                            span,
                            "local memory an `async_tile_store` reads was written before \
                             `async_tile_store_wait`"
                                .to_string(),
                        ));
                    }
                }
                self.group_barrier(span, op.name())?;
            }
            TileCopyOp::Wait { slot } | TileCopyOp::Release { slot } => {
                let slot = self.tile_slot(frame, slot, span)?;
                if let TileCopyOp::Wait { .. } = op {
                    let landed = std::mem::take(&mut self.copies.borrow_mut().tiles[slot]);
                    PendingCopies::land(landed);
                }
                self.group_barrier(span, op.name())?;
            }
        }
        Ok(())
    }

    /// Calls `each` with every element of `tile`'s box in row order: its local memory cell and
    /// its buffer's cell (`None` past the buffer's shape). A misaligned tile in local memory is
    /// undefined behaviour; a buffer smaller than its shape says is out of bounds.
    fn walk_tile_box(
        &self,
        frame: &Frame<'g>,
        tile: &TileBox<'g>,
        span: Span,
        mut each: impl FnMut(&'g AtomicU64, Option<&'g AtomicU64>),
    ) -> Execution<()> {
        use kdsl_ir::tile_copy::{columns, landing, DESTINATION_ALIGNMENT};
        let size = i128::from(tile.element.size_in_bytes());
        if tile.start * size % i128::from(DESTINATION_ALIGNMENT) != 0 {
            return Err(self.undefined(
                span,
                format!(
                    "a tile at local element {}, not a multiple of {DESTINATION_ALIGNMENT} bytes",
                    tile.start
                ),
            ));
        }
        let (memory, shape, strides) = self.tile_buffer(frame, tile.buffer, span)?;
        let name = &frame.function.parameter(tile.buffer).name;
        let columns = columns(tile.element).unwrap_or(1);
        for r in 0..tile.rows {
            for c in 0..columns {
                let at = tile.start + i128::from(landing(tile.element, r, c));
                let Location::Shared(local) = self.locate_at(frame, tile.local, &[at], span)?
                else {
                    return Err(self.undefined(span, "a tile in private memory".to_string()));
                };
                let at = [
                    u128::from(tile.corner[0]) + u128::from(r),
                    u128::from(tile.corner[1]) + u128::from(c),
                ];
                let cell = if at[0] < shape[0] && at[1] < shape[1] {
                    let flat = at[0] * strides[0] + at[1] * strides[1];
                    let Some(cell) = memory.cells.get(flat as usize) else {
                        return Err(self.error(|work_item| InterpError::OutOfBounds {
                            span,
                            work_item,
                            message: format!(
                                "element {flat} of buffer `{name}` of {} elements",
                                memory.cells.len()
                            ),
                        }));
                    };
                    Some(cell)
                } else {
                    None
                };
                each(local, cell);
            }
        }
        Ok(())
    }

    /// The memory of the 2-D buffer parameter `buffer` of a tile statement, its shape and
    /// its strides.
    fn tile_buffer(
        &self,
        frame: &Frame<'g>,
        buffer: kdsl_ir::ParameterId,
        span: Span,
    ) -> Execution<(&'g SharedMemory, [u128; 2], [u128; 2])> {
        let shaped = frame
            .function
            .shaped_buffers
            .iter()
            .find(|shaped| shaped.buffer == buffer);
        let memory = self.buffer_memory(&frame.parameters[buffer.0 as usize]);
        let (Some(shaped), Some(memory)) = (shaped, memory) else {
            return Err(self.undefined(span, "a tile of no 2-D buffer".to_string()));
        };
        let scalar = |id: kdsl_ir::ParameterId| match frame.parameters[id.0 as usize] {
            Binding::Scalar(bits) => u128::from(bits),
            _ => 0,
        };
        Ok((
            memory,
            [scalar(shaped.shape[0]), scalar(shaped.shape[1])],
            [scalar(shaped.strides[0]), scalar(shaped.strides[1])],
        ))
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

    /// A tile copy's slot, below `tile_copy::SLOTS` (undefined behaviour otherwise).
    fn tile_slot(
        &self,
        frame: &mut Frame<'g>,
        slot: &'g Expression,
        span: Span,
    ) -> Execution<usize> {
        let value = self.expression(frame, slot)?;
        if value >= u64::from(kdsl_ir::tile_copy::SLOTS) {
            return Err(self.undefined(
                span,
                format!(
                    "tile copy slot {value}, not below {}",
                    kdsl_ir::tile_copy::SLOTS
                ),
            ));
        }
        Ok(value as usize)
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

    fn sub_group_operation(
        &self,
        frame: &mut Frame<'g>,
        op: SubGroupOp,
        arguments: &'g [Expression],
        ty: ScalarType,
        span: Span,
    ) -> Execution<u64> {
        let values = self.expressions(frame, arguments)?;
        let lanes_per_group = self.group.launch.launch.sub_group_size as usize;
        match op {
            SubGroupOp::LocalId => return Ok(self.lane as u64),
            SubGroupOp::Size => return Ok(u64::from(self.sub_group_size)),
            SubGroupOp::GroupId => return Ok(self.sub_group as u64),
            SubGroupOp::MatrixGroupId => {
                return Ok(self.linear_local as u64 / u64::from(kdsl_ir::matrix_group::GROUP_SIZE))
            }
            SubGroupOp::GroupCount => {
                let group_size = self.group.launch.launch.work_group_size() as usize;
                return Ok(group_size.div_ceil(lanes_per_group) as u64);
            }
            _ => {}
        }
        let Some(rendezvous) = self.group.sub_groups.get(self.sub_group) else {
            return Err(self.undefined(span, "sub-group operation outside a sub-group".into()));
        };
        let own = values.first().copied().unwrap_or(0);
        let second = values.get(1).copied().unwrap_or(0);
        let arrive = |value: u64| {
            rendezvous
                .arrive(
                    self.lane,
                    value,
                    span,
                    "sub-group operation",
                    &self.group.aborted,
                )
                .map_err(|failure| self.rendezvous_failure(failure))
        };
        let lanes = arrive(own)?;
        let source_lane = match op {
            SubGroupOp::Shuffle => second,
            SubGroupOp::ShuffleXor => self.lane as u64 ^ second,
            SubGroupOp::ShuffleUp => match (self.lane as u64).checked_sub(second) {
                Some(lane) => lane,
                None => return Ok(own),
            },
            SubGroupOp::ShuffleDown => {
                let lane = (self.lane as u64).saturating_add(second);
                if lane >= lanes.len() as u64 {
                    return Ok(own);
                }
                lane
            }
            SubGroupOp::Broadcast => {
                let chosen = arrive(second)?;
                if chosen.iter().any(|&lane| lane != second) {
                    return Err(self.undefined(
                        span,
                        "`sub_group_broadcast` from lanes that differ across the sub-group".into(),
                    ));
                }
                second
            }
            SubGroupOp::Reduce(reduction) => return Ok(combine_all(reduction, ty, &lanes)),
            SubGroupOp::InclusiveScan(reduction) => {
                return Ok(combine_all(reduction, ty, &lanes[..=self.lane]))
            }
            SubGroupOp::ExclusiveScan(reduction) => {
                return Ok(combine_all(reduction, ty, &lanes[..self.lane]))
            }
            SubGroupOp::Any => return Ok(u64::from(lanes.iter().any(|&c| c != 0))),
            SubGroupOp::All => return Ok(u64::from(lanes.iter().all(|&c| c != 0))),
            SubGroupOp::Ballot => {
                if lanes.len() > 64 {
                    return Err(self.undefined(
                        span,
                        format!(
                            "`sub_group_ballot` in a sub-group of {} lanes (at most 64)",
                            lanes.len()
                        ),
                    ));
                }
                return Ok(lanes
                    .iter()
                    .enumerate()
                    .filter(|(_, &c)| c != 0)
                    .fold(0, |mask, (lane, _)| mask | 1 << lane));
            }
            SubGroupOp::LocalId
            | SubGroupOp::Size
            | SubGroupOp::GroupId
            | SubGroupOp::GroupCount
            | SubGroupOp::MatrixGroupId => return Ok(0),
        };
        match lanes.get(source_lane as usize) {
            Some(&value) => Ok(value),
            None => Err(self.undefined(
                span,
                format!(
                    "{} from lane {source_lane} of a sub-group of {} lanes",
                    op.name(),
                    lanes.len()
                ),
            )),
        }
    }

    fn work_group_operation(
        &self,
        frame: &mut Frame<'g>,
        op: WorkGroupOp,
        arguments: &'g [Expression],
        ty: ScalarType,
        span: Span,
    ) -> Execution<u64> {
        let values = self.expressions(frame, arguments)?;
        let own = values.first().copied().unwrap_or(0);
        let Some(rendezvous) = &self.group.barrier else {
            return Err(self.undefined(span, "work-group operation outside a work-group".into()));
        };
        let arrive = |value: u64| {
            rendezvous
                .arrive(
                    self.linear_local,
                    value,
                    span,
                    "work-group operation",
                    &self.group.aborted,
                )
                .map_err(|failure| self.rendezvous_failure(failure))
        };
        let items = arrive(own)?;
        let position = self.linear_local;
        Ok(match op {
            WorkGroupOp::Reduce(reduction) => combine_all(reduction, ty, &items),
            WorkGroupOp::InclusiveScan(reduction) => {
                combine_all(reduction, ty, &items[..=position])
            }
            WorkGroupOp::ExclusiveScan(reduction) => combine_all(reduction, ty, &items[..position]),
            WorkGroupOp::Broadcast => {
                let source = values.get(1).copied().unwrap_or(0);
                let chosen = arrive(source)?;
                if chosen.iter().any(|&id| id != source) {
                    return Err(self.undefined(
                        span,
                        "`work_group_broadcast` from ids that differ across the work-group".into(),
                    ));
                }
                match items.get(source as usize) {
                    Some(&value) => value,
                    None => {
                        return Err(self.undefined(
                            span,
                            format!(
                                "`work_group_broadcast` from local id {source} of a work-group of {} work-items",
                                items.len()
                            ),
                        ))
                    }
                }
            }
        })
    }
}

/// `values` combined in order by `reduction`; its identity when there are none.
fn combine_all(reduction: Reduction, ty: ScalarType, values: &[u64]) -> u64 {
    values
        .iter()
        .fold(reduction.identity(ty), |total, &value| match reduction {
            Reduction::Add => scalar::add(ty, total, value),
            Reduction::Min => scalar::minimum(ty, total, value),
            Reduction::Max => scalar::maximum(ty, total, value),
        })
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
