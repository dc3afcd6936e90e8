package dev.ratelimit.gateway;

/**
 * {@link GatewayAlgorithmsTests} on the in-memory backend.
 */
class InMemoryGatewayAlgorithmsTests extends GatewayAlgorithmsTests {

}
