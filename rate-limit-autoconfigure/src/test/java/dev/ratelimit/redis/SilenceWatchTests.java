package dev.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.AsyncCommand;
import io.lettuce.core.protocol.Command;
import io.lettuce.core.protocol.CommandType;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Ticker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link SilenceWatch} on a channel whose event loop runs by a clock the test
 * moves: calls fail when Redis sends nothing for the timeout while they wait,
 * and only then. An event loop that runs late (a busy machine) reads what
 * arrived before its scheduled checks run, as Netty's loop does; here that is
 * a read delivered before the test runs the tasks that came due meanwhile.
 */
class SilenceWatchTests {

	private static final Duration TIMEOUT = Duration.ofMillis(100);

	private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(2);

	private final MockTicker ticker = Ticker.newMockTicker();

	private final RedisSilence silence = new RedisSilence(TIMEOUT);

	private final AtomicInteger probes = new AtomicInteger();

	private EmbeddedChannel channel;

	@BeforeEach
	void watchedChannel() {
		this.silence.onSilence(this.probes::incrementAndGet);
		this.channel = EmbeddedChannel.builder().ticker(this.ticker).build();
		SilenceWatch.install(this.channel, this.silence, CONNECT_TIMEOUT);
	}

	@AfterEach
	void close() {
		this.channel.finishAndReleaseAll();
	}

	@Test
	void callsWaitingWhileRedisSendsNothingForTheTimeoutFailAndRedisIsSilent() {
		AsyncCommand<byte[], byte[], String> first = send(CommandType.FCALL);
		AsyncCommand<byte[], byte[], String> second = send(CommandType.FCALL);
		advance(99);
		assertThat(first).isNotDone();
		assertThat(this.silence.isSilent()).isFalse();

		advance(1);
		assertThat(first).isCompletedExceptionally();
		assertThat(second).isCompletedExceptionally();
		assertThat(first).failsWithin(Duration.ZERO)
			.withThrowableOfType(ExecutionException.class)
			.havingCause()
			.isInstanceOf(RedisCommandTimeoutException.class)
			.withMessage("Redis sent nothing for 100 ms");
		assertThat(this.silence.isSilent()).isTrue();
		assertThat(this.silence.describe()).contains("nothing received for 100 ms while 2 command(s) waited");
		assertThat(this.probes).hasValue(1);
	}

	@Test
	void theFirstBytesFromRedisAfterASilenceOpenTheGate() {
		send(CommandType.FCALL);
		advance(100);
		assertThat(this.silence.isSilent()).isTrue();

		read();
		assertThat(this.silence.isSilent()).isFalse();
	}

	@Test
	void aCallWaitsAsLongAsRedisKeepsAnsweringTheCallsBeforeIt() {
		AsyncCommand<byte[], byte[], String> first = send(CommandType.FCALL);
		AsyncCommand<byte[], byte[], String> second = send(CommandType.FCALL);
		advance(80);
		answer(first);
		advance(80);
		// 160 ms after it was sent, 80 ms after Redis last sent anything: a busy Redis, not a silent one.
		assertThat(second).isNotDone();
		assertThat(this.silence.isSilent()).isFalse();

		advance(20);
		assertThat(second).isCompletedExceptionally();
	}

	@Test
	void anEventLoopThatRunsLateReadsTheRepliesBeforeItChecksSoABusyApplicationIsNotASilentRedis() {
		AsyncCommand<byte[], byte[], String> first = send(CommandType.FCALL);
		AsyncCommand<byte[], byte[], String> second = send(CommandType.FCALL);
		// The event loop gets no CPU for 500 ms; Redis answered both long before.
		this.ticker.advance(500, TimeUnit.MILLISECONDS);
		answer(first);
		answer(second);
		this.channel.runScheduledPendingTasks();
		assertThat(first).isCompleted().isNotCompletedExceptionally();
		assertThat(second).isCompleted().isNotCompletedExceptionally();
		assertThat(this.silence.isSilent()).isFalse();
	}

	@Test
	void aLateEventLoopThatReadsOnlySomeRepliesGivesTheRestTheTimeoutFromThatRead() {
		AsyncCommand<byte[], byte[], String> first = send(CommandType.FCALL);
		AsyncCommand<byte[], byte[], String> second = send(CommandType.FCALL);
		this.ticker.advance(500, TimeUnit.MILLISECONDS);
		answer(first);
		this.channel.runScheduledPendingTasks();
		assertThat(second).isNotDone();

		advance(99);
		assertThat(second).isNotDone();
		answer(second);
		advance(200);
		assertThat(second).isNotCompletedExceptionally();
		assertThat(this.silence.isSilent()).isFalse();
	}

	@Test
	void whileRedisWorksOnACommandOfStartUpItMayStaySilentForTheConnectTimeout() {
		AsyncCommand<byte[], byte[], String> load = send(CommandType.FUNCTION);
		AsyncCommand<byte[], byte[], String> call = send(CommandType.FCALL);
		advance(1_900);
		assertThat(call).isNotDone();
		answer(load);
		advance(99);
		assertThat(call).isNotDone();
		advance(1);
		assertThat(call).isCompletedExceptionally();
	}

	@Test
	void nothingIsCheckedWhileNoCallWaits() {
		AsyncCommand<byte[], byte[], String> only = send(CommandType.FCALL);
		advance(10);
		answer(only);
		advance(10_000);
		assertThat(this.silence.isSilent()).isFalse();
		assertThat(only).isNotCompletedExceptionally();
	}

	private AsyncCommand<byte[], byte[], String> send(CommandType type) {
		AsyncCommand<byte[], byte[], String> command = new AsyncCommand<>(
				new Command<>(type, new StatusOutput<>(ByteArrayCodec.INSTANCE)));
		this.channel.writeOutbound(command);
		return command;
	}

	/** Bytes from Redis, read, then decoded into the oldest command's reply. */
	private void answer(AsyncCommand<byte[], byte[], String> command) {
		read();
		command.getOutput().set(StandardCharsets.UTF_8.encode("OK"));
		command.complete();
	}

	private void read() {
		this.channel.writeInbound(Unpooled.wrappedBuffer("+OK\r\n".getBytes(StandardCharsets.UTF_8)));
		// What reaches the end of this pipeline (Lettuce's handler decodes it in production) is dropped.
		this.channel.releaseInbound();
	}

	private void advance(long millis) {
		this.ticker.advance(millis, TimeUnit.MILLISECONDS);
		this.channel.runScheduledPendingTasks();
	}

}
