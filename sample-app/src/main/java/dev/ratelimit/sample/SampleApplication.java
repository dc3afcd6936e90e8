package dev.ratelimit.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A small service protected by the rate-limit starter. Starts on the in-memory
 * backend; run with {@code --rate-limit.backend=redis} to share limits through
 * Redis ({@code spring.data.redis.*} as usual).
 */
@SpringBootApplication
public class SampleApplication {

	public static void main(String[] args) {
		SpringApplication.run(SampleApplication.class, args);
	}

}
