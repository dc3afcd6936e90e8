package dev.ratelimit.redis;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * One of the limiter's Lua scripts, in the two forms Redis can run it: the
 * text sent as {@code EVALSHA} (Spring Data Redis falls back to {@code EVAL}
 * when the server's script cache lost it) and the function of the limiter's
 * library ({@link LuaScripts#library()}) called with {@code FCALL}. Both take
 * the same keys and arguments and reply the same; {@link ScriptRunner} picks
 * the form.
 *
 * @param eval the script as a whole text, with the Java type of its reply
 * (a {@code List} or a {@code Long})
 * @param function the name of the function in the library
 * @param <T> the type of the reply
 */
record LimiterScript<T>(RedisScript<T> eval, String function) {
}
