import Threads

/// The pipeline thread's inbox: any thread or task puts inputs in, the pipeline thread takes them
/// out in order, waiting at most until its next tick (on its own thread, never in the pool).
typealias InputQueue = BlockingQueue<DaemonInput>
