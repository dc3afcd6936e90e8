package dev.ratelimit.support;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * What a class of the core logs through {@link System.Logger} while this is
 * open. Without a {@code LoggerFinder} of its own on the classpath, the JDK
 * hands {@code System.Logger} to {@code java.util.logging}, where a handler on
 * the class's logger sees each record first, whatever Spring Boot's logging
 * system did to the root logger: unlike the console, which
 * {@code OutputCaptureExtension} reads, this does not depend on which test ran
 * before.
 */
public final class CapturedLog implements AutoCloseable {

	private final Logger logger;

	private final List<LogRecord> records = new CopyOnWriteArrayList<>();

	private final Handler handler = new Handler() {

		@Override
		public void publish(LogRecord record) {
			CapturedLog.this.records.add(record);
		}

		@Override
		public void flush() {
		}

		@Override
		public void close() {
		}

	};

	private CapturedLog(Logger logger) {
		this.logger = logger;
		logger.addHandler(this.handler);
	}

	/**
	 * Starts capturing what a class logs.
	 * @param type the class, whose name is its logger's
	 * @return the capture, to close
	 */
	public static CapturedLog of(Class<?> type) {
		return new CapturedLog(Logger.getLogger(type.getName()));
	}

	/**
	 * Returns the messages logged at warning level, in order.
	 * @return the messages
	 */
	public List<String> warnings() {
		return this.records.stream()
			.filter((record) -> record.getLevel() == Level.WARNING)
			.map(LogRecord::getMessage)
			.toList();
	}

	/**
	 * Returns the messages logged at any level, in order.
	 * @return the messages
	 */
	public List<String> messages() {
		return this.records.stream().map(LogRecord::getMessage).toList();
	}

	@Override
	public void close() {
		this.logger.removeHandler(this.handler);
	}

}
